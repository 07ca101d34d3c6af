"""The speech decoder in the quant sweep: token2wav's flow at each precision against FP32 on the exporter's bundle."""
from __future__ import annotations

import onnx

from quant.voice_sweep import FLOW, MEL_BOUND, sweep_voice, verdict, voice_text_table
from quant_helpers import run_cli


def test_static_int8_flow_is_calibrated_on_the_bundles_own_speech_and_measured_against_fp32(omni_bundle, tmp_path):
    rows = sweep_voice(omni_bundle, ["fp32", "int8-static-conv", "int8-static"], tmp_path / "voice", repeats=1)
    by = {r["precision"]: r for r in rows}
    assert all(r["status"] == "ok" for r in rows), [r.get("error") for r in rows]
    ref = by["fp32"]
    assert ref["windows"] > 0 and ref["mel_rel_rms"] == 0 and ref["wave_rel_rms"] == 0
    conv = by["int8-static-conv"]
    assert conv["calibration_inputs"] > 0 and conv["windows"] == ref["windows"]
    # Really INT8: every convolution of the flow reads quantized weights; no MatMul does in this recipe.
    for name in FLOW:
        graph = onnx.load(str(tmp_path / "voice" / "int8-static-conv" / f"{name}.int8.onnx")).graph
        ops = [n.op_type for n in graph.node]
        assert "DequantizeLinear" in ops and "Conv" in ops
        made = {n.output[0] for n in graph.node if n.op_type == "DequantizeLinear"}
        assert all(n.input[1] in made for n in graph.node if n.op_type == "Conv")
        assert not any(n.input[1] in made for n in graph.node if n.op_type == "MatMul")
    # The convolution-only recipe stays well under the bound; quantizing the MatMuls too costs more error.
    assert 0 < conv["mel_rel_rms"] < MEL_BOUND
    assert by["int8-static"]["mel_rel_rms"] > conv["mel_rel_rms"]
    assert "mel err" in voice_text_table(rows) and "static INT8 flow" in verdict(rows)


def test_an_unknown_speech_decoder_precision_is_refused_in_one_sentence(omni_bundle, tmp_path):
    rc, _, stderr = run_cli("sweep", str(omni_bundle), "--voice", "int4", "-o", str(tmp_path / "s"), "--no-progress")
    assert rc == 2
    assert "unknown speech decoder precision 'int4'" in stderr and "Traceback" not in stderr
