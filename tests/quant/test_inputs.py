"""Sweep inputs other than a bare GGUF: an exporter checkpoint, and a bundle with an encoder graph."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from quant_helpers import run_cli


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from export.tiny import write_tiny

    out = tmp_path_factory.mktemp("ckpt") / "audio"
    write_tiny(out, "audio")
    return out


def test_sweep_of_a_checkpoint(checkpoint, journal, tmp_path):
    out = tmp_path / "s"
    rc, stdout, stderr = run_cli("sweep", str(checkpoint), "--types", "F16,Q8_0,Q4_K_M,IQ4_XS", "--encoders",
                                 "fp32,fp16", "--journal", str(journal), "--threads", "1", "--no-progress",
                                 "-o", str(out))
    assert rc == 0, stderr
    assert (out / "reference-F16.gguf").is_file()  # converted once by the exporter
    data = json.loads((out / "results.json").read_text())
    enc = {r["precision"]: r for r in data["encoders"]}
    from export.onnx_bridge import onnx_available

    if onnx_available():
        # the exporter's own audio encoder graph embeds the journal's recorded audio, with its streaming cache
        assert data["meta"]["stream_source"].endswith("+ media through audio.fp32.onnx")
        assert enc["fp32"]["max_abs"] == 0 and 0 < enc["fp16"]["max_abs"] < 0.01 and enc["fp16"]["llm_kl"] < 1e-3
    else:  # an exporter without ONNX graphs: the encoder rows say so, the LLM rows are still measured
        assert all(r["status"] == "failed" and "ONNX" in r["error"] for r in enc.values())
    rows = {r["type"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert list(rows) == ["F16", "Q8_0", "Q4_K_M", "IQ4_XS"]
    assert all(r["status"] == "ok" for r in rows.values())
    assert rows["Q8_0"]["kl_mean"] < rows["Q4_K_M"]["kl_mean"] and rows["Q8_0"]["top1"] > rows["Q4_K_M"]["top1"]
    assert rows["F16"]["n_chunks"] > 0 and rows["F16"]["decision_note"] == ""  # protocol tokens found
    assert stdout.strip().splitlines()[-1].startswith("best under ")


def test_encoders_of_a_bare_gguf_are_explained(tiny_gguf, tmp_path):
    rc, stdout, stderr = run_cli("sweep", str(tiny_gguf), "--types", "F16", "--encoders", "fp16",
                                 "--threads", "1", "--no-progress", "-o", str(tmp_path / "s"))
    assert rc == 0, stderr
    assert "a bare GGUF has no encoders" in (tmp_path / "s" / "report.md").read_text()


def test_bundle_encoders_and_journal_media(omni_bundle, journal, tmp_path):
    out = tmp_path / "s"
    rc, _, stderr = run_cli("sweep", str(omni_bundle), "--types", "F16,Q8_0,Q4_K_M", "--encoders", "fp32,fp16,int8",
                            "--journal", str(journal), "--threads", "1", "--no-progress", "-o", str(out))
    assert rc == 0, stderr
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["stream_source"].endswith("+ media through audio.fp32.onnx, vision.fp32.onnx")
    from quant.chunks import ChunkStream

    stream = ChunkStream.load(out / "stream.json")  # what every precision replays
    from edge.bundle.settings import REFERENCE_SYSTEM_PROMPT

    prompt, *first = stream.chunks[0].inputs
    assert prompt == REFERENCE_SYSTEM_PROMPT  # prefilled before the first chunk, as the chunk loop does
    # a 160x120 frame is one slice of 64 embeddings; a second of audio gives 10; the tiny LLM is 256 wide
    assert first[0].startswith("<unit>") and first[1] == "<image>" and first[2].shape == (64, 256)
    assert first[3] == "</image>" and first[4].shape == (10, 256)
    assert all(r["n_chunks"] == 9 for r in data["rows"])

    with open(out / "encoders.csv") as f:
        enc = {(r["part"], r["precision"]): r for r in csv.DictReader(f)}
    assert set(enc) == {(p, q) for p in ("audio", "vision") for q in ("fp32", "fp16", "int8")}
    assert all(r["status"] == "ok" for r in enc.values()), [(k, r["error"]) for k, r in enc.items() if r["error"]]
    for part in ("audio", "vision"):
        fp32, fp16, int8 = (enc[part, q] for q in ("fp32", "fp16", "int8"))
        assert float(fp32["max_abs"]) == 0.0 and float(fp32["llm_kl"]) == 0.0 and float(fp32["decision_agree"]) == 1
        assert 0 < float(fp16["max_abs"]) < float(int8["max_abs"])
        assert float(fp16["llm_kl"]) < float(int8["llm_kl"])
        # both smaller than FP32 (in graphs this tiny, INT8's quantization scales outweigh its saving over FP16)
        assert max(float(int8["size_mb"]), float(fp16["size_mb"])) < float(fp32["size_mb"])
        assert fp16["derived"] == "True" and Path(fp16["file"]).name == f"{part}.fp16.onnx"  # named as the exporter
        assert 0 <= float(int8["decision_agree"]) <= 1
    assert "## Encoders" in (out / "report.md").read_text()
