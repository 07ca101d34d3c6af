"""TensorRT engines: profiles, pre-checks and the float64 rewrite everywhere (the builder: test_trt_builder.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

from export.errors import ExportError
from export.onnx import build_onnx_parts
from export.onnx.precision import to_int8_dynamic
from export.onnx.session import open_session
from export.trt import DIMENSIONS, blockers, profile_for
from export.torch_ref.tiny_parts import tiny_media_config, tiny_media_tensors


@pytest.fixture(scope="module")
def omni_graphs(tmp_path_factory):
    """Vision and audio graphs (FP32, FP16 and INT8 QDQ) of a tiny Omni checkpoint."""
    config = {**tiny_media_config("omni"), "hidden_size": 128}
    tensors = tiny_media_tensors("omni", config, seed=6)
    out = tmp_path_factory.mktemp("onnx")
    build_onnx_parts(tensors.__getitem__, config, out, ["fp32", "fp16", "int8"], progress=False)
    return out


def test_profiles_bracket_the_runtime_shapes(omni_graphs):
    audio = profile_for("audio", onnx.load(str(omni_graphs / "audio.fp32.onnx")))
    assert audio["mel"] == {"min": [1, 80, 2], "opt": [1, 80, 100], "max": [1, 80, 3000]}
    assert [audio["past_kv"][k][4] for k in ("min", "opt", "max")] == [0, 500, 1500]
    vision = profile_for("vision", onnx.load(str(omni_graphs / "vision.int8.onnx")))
    assert vision["pixels"]["opt"] == [1, 3, 448, 448] and vision["pixels"]["max"] == [1, 3, 980, 980]
    for table in DIMENSIONS.values():
        assert all(lo <= opt <= hi for lo, opt, hi in table.values())
    with pytest.raises(ExportError, match="No TensorRT profile is defined for the part 'lidar'"):
        profile_for("lidar", onnx.load(str(omni_graphs / "audio.fp32.onnx")))


def test_blockers_name_what_tensorrt_cannot_take(omni_graphs, tmp_path):
    assert blockers(omni_graphs / "audio.fp32.onnx") == []
    assert blockers(omni_graphs / "audio.int8.onnx") == []  # QDQ is TensorRT's explicit INT8 form
    dynamic = tmp_path / "audio.dyn.onnx"
    to_int8_dynamic(omni_graphs / "audio.fp32.onnx", dynamic)
    assert blockers(dynamic) == ["it uses DynamicQuantizeLinear, MatMulInteger (dynamic INT8), "
                                 "which TensorRT does not implement"]


def test_vocoder_is_demoted_to_float32_for_tensorrt(tmp_path):
    """TensorRT has no float64: the vocoder's exact phase path is demoted, and stays close."""
    from export.onnx.graphs import GraphSpec, export_graph
    from export.torch_ref.tiny_parts import write_token2wav_assets
    from export.torch_ref.token2wav_assets import load_hift
    from export.torch_ref.token2wav_graphs import HiftVocoder, hift_noise
    from export.trt.rewrite import demote_float64

    write_token2wav_assets(tmp_path, seed=8)
    vocoder = HiftVocoder(load_hift(tmp_path)).eval()
    rand_ini, sine_noise = hift_noise(3, 58, 8)
    inputs = {"mel": torch.randn(1, 80, 58), "cache_source": torch.zeros(1, 1, 3840),
              "rand_ini": rand_ini, "sine_noise": sine_noise}
    exact = tmp_path / "token2wav_vocoder.fp32.onnx"
    export_graph(GraphSpec("token2wav_vocoder", vocoder, inputs, ["speech", "source"],
                           {"mel": {2: "frames"}, "sine_noise": {1: "samples"}}), exact)
    assert blockers(exact) == ["it computes in float64 (the vocoder's exact phase accumulation), "
                               "which TensorRT lacks"]
    demoted = tmp_path / "demoted.onnx"
    assert demote_float64(exact, demoted) > 0 and blockers(demoted) == []
    with torch.no_grad():
        speech = vocoder(*inputs.values())[0].numpy()
    feed = {k: v.numpy() for k, v in inputs.items()}
    got = open_session(demoted).run(None, feed)[0]
    assert np.abs(got - speech).mean() / np.abs(speech).mean() < 1e-2
    assert np.abs(open_session(exact).run(None, feed)[0] - speech).max() < 1e-4  # the exact graph stays exact
