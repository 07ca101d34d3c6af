"""Sweep inputs other than a bare GGUF: an exporter checkpoint, and a bundle with an encoder graph."""
from __future__ import annotations

import csv
import json

import pytest

from conftest import run_cli
from tiny_bundle import write_tiny_bundle


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from export.tiny import write_tiny

    out = tmp_path_factory.mktemp("ckpt") / "audio"
    write_tiny(out, "audio")
    return out


def test_sweep_of_a_checkpoint(checkpoint, journal, tmp_path):
    out = tmp_path / "s"
    rc, stdout, stderr = run_cli("sweep", str(checkpoint), "--types", "F16,Q8_0,Q4_K_M,IQ4_XS", "--encoders",
                                 "fp32,fp16", "--journal", str(journal), "--threads", "1", "--no-progress", "-o", str(out))
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


def test_bundle_with_encoders(tiny_gguf, tmp_path):
    bundle = write_tiny_bundle(tmp_path / "bundle", tiny_gguf)
    out = tmp_path / "s"
    rc, stdout, stderr = run_cli("sweep", str(bundle), "--types", "F16,Q8_0", "--encoders", "fp32,fp16,int8",
                                 "--threads", "1", "--no-progress", "-o", str(out))
    assert rc == 0, stderr
    with open(out / "encoders.csv") as f:
        enc = {r["precision"]: r for r in csv.DictReader(f) if r["part"] == "audio"}
    assert set(enc) == {"fp32", "fp16", "int8"} and all(r["status"] == "ok" for r in enc.values())
    assert float(enc["fp32"]["max_abs"]) == 0.0 and float(enc["fp32"]["llm_kl"]) == 0.0
    assert 0 < float(enc["fp16"]["max_abs"]) < float(enc["int8"]["max_abs"])
    assert float(enc["fp16"]["llm_kl"]) < float(enc["int8"]["llm_kl"])
    assert float(enc["int8"]["size_mb"]) < float(enc["fp16"]["size_mb"]) < float(enc["fp32"]["size_mb"])
    assert enc["fp16"]["derived"] == "True"  # made from the FP32 graph, since the bundle has none
    assert "## Encoders" in (out / "report.md").read_text()


def test_encoders_of_a_bare_gguf_are_explained(tiny_gguf, tmp_path):
    rc, stdout, stderr = run_cli("sweep", str(tiny_gguf), "--types", "F16,Q8_0", "--encoders", "fp16",
                                 "--threads", "1", "--no-progress", "-o", str(tmp_path / "s"))
    assert rc == 0, stderr
    assert "a bare GGUF has no encoders" in (tmp_path / "s" / "report.md").read_text()


def test_journal_media_go_through_the_bundle_encoders(tiny_gguf, journal, tmp_path):
    bundle = write_tiny_bundle(tmp_path / "bundle", tiny_gguf)
    out = tmp_path / "s"
    rc, _, stderr = run_cli("sweep", str(bundle), "--types", "F16,Q8_0,Q4_K_M", "--encoders", "fp32,fp16,int8",
                            "--journal", str(journal), "--threads", "1", "--no-progress", "-o", str(out))
    assert rc == 0, stderr
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["stream_source"].endswith("+ media through audio-fp32.onnx, vision-fp32.onnx")
    from quant.chunks import ChunkStream

    stream = ChunkStream.load(out / "stream.json")  # what every precision replays
    first = stream.chunks[0].inputs
    assert first[0].startswith("<unit>") and first[1] == "<image>" and first[2].shape == (64, 256)
    assert first[3] == "</image>" and first[4].shape == (10, 256)
    assert all(r["n_chunks"] == 9 for r in data["rows"])
    enc = {(r["part"], r["precision"]): r for r in data["encoders"]}
    assert set(enc) == {(p, q) for p in ("audio", "vision") for q in ("fp32", "fp16", "int8")}
    assert enc["audio", "fp32"]["decision_agree"] == 1.0 and enc["vision", "fp32"]["decision_agree"] == 1.0
    assert all(0 <= r["decision_agree"] <= 1 for r in enc.values())
    assert enc["vision", "fp16"]["max_abs"] < enc["vision", "int8"]["max_abs"]
