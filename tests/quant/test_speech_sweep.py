"""The TTS model's GGUF type and the vocoder's precision in the sweep, with their speech-quality figures, on the
exporter's own bundle."""
from __future__ import annotations

import json

from quant_helpers import run_cli


def test_tts_types_and_vocoder_precisions_are_swept_against_the_bundles_own(omni_bundle, tmp_path):
    out = tmp_path / "s"
    rc, stdout, stderr = run_cli("sweep", str(omni_bundle), "--types", "F16,Q8_0", "--tts-types", "F16,Q4_K_M",
                                 "--vocoder", "fp32,fp16", "--threads", "1", "--repeats", "1", "--no-progress",
                                 "-o", str(out))
    assert rc == 0, stderr
    rows = {(r["part"], r["precision"]): r for r in json.loads((out / "results.json").read_text())["speech"]}
    assert all(r["status"] == "ok" for r in rows.values()), [r.get("error") for r in rows.values()]
    ref, q4 = rows[("tts", "F16")], rows[("tts", "Q4_K_M")]
    # the bundle's own TTS against itself is exact; a quantized one is smaller and not identical
    assert ref["code_agree"] == 1.0 and ref["wave_spec_db"] == 0.0
    assert q4["size_mb"] < ref["size_mb"] and q4["code_agree"] < 1.0 and q4["wave_spec_db"] > 0
    assert ref["tts_rtf"] > 0 and q4["tts_rtf"] > 0
    v32, v16 = rows[("vocoder", "fp32")], rows[("vocoder", "fp16")]
    # FP32 against itself is exact (the vocoder's noise is seeded alike); FP16 differs, and is timed and sized
    assert v32["wave_rel_rms"] == 0.0 and v32["wave_spec_db"] == 0.0
    assert v16["wave_rel_rms"] > 0 and v16["wave_spec_db"] > 0 and v16["rtf"] > 0 and v16["size_mb"] > 0
    md = (out / "report.md").read_text()
    assert "## TTS model type and vocoder precision" in md and "| tts | Q4_K_M |" in md
    assert "code agree" in stdout


def test_tts_types_on_a_bare_gguf_say_why_not(tiny_gguf, tmp_path):
    rc, _, stderr = run_cli("sweep", str(tiny_gguf), "--types", "F16", "--tts-types", "Q8_0", "--threads", "1",
                            "--no-progress", "-o", str(tmp_path / "s"))
    assert rc == 0, stderr
    row = json.loads((tmp_path / "s" / "results.json").read_text())["speech"][0]
    assert row["status"] == "failed" and "has no TTS model or vocoder" in row["error"]
