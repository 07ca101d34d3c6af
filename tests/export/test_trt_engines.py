"""TensorRT engines: profiles and pre-checks everywhere; real engine builds only with a GPU (marker gpu)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

from export.errors import ExportError
from export.onnx import build_onnx_parts
from export.onnx.precision import to_int8_dynamic
from export.onnx.session import open_session
from export.trt import DIMENSIONS, blockers, build_trt_engines, environment_reason, gpu_info, profile_for
from export.trt.builder import source_precision
from export.torch_ref.tiny_parts import tiny_media_config, tiny_media_tensors

NO_TRT = environment_reason()


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


def test_engines_start_from_the_graph_their_tensorrt_can_take():
    assert [source_precision(p, 10) for p in ("fp16", "int8")] == ["fp32", "int8"]  # builder flags pick FP16
    assert [source_precision(p, 11) for p in ("fp16", "int8")] == ["fp16", "int8"]  # strongly typed only


@pytest.mark.skipif(NO_TRT is None, reason="TensorRT and a GPU are present: engines are built instead")
def test_without_tensorrt_every_graph_is_kept_with_a_reason(omni_graphs, tmp_path):
    records = build_trt_engines(omni_graphs, tmp_path / "trt", progress=False)
    assert {(r["name"], r["precision"]) for r in records} == {
        (p, q) for p in ("audio", "vision") for q in ("fp16", "int8")}
    for record in records:
        assert record["kind"] == "onnx-kept"
        assert record["reason"] == f"kept ONNX because {NO_TRT}"
    assert not (tmp_path / "trt").exists()
    with pytest.raises(ExportError, match="Unknown TensorRT precision fp8: use fp16 or int8."):
        build_trt_engines(omni_graphs, tmp_path, ["fp8"])


@pytest.mark.gpu
@pytest.mark.skipif(NO_TRT is not None, reason=f"needs TensorRT and a GPU ({NO_TRT})")
def test_engines_build_and_match_onnx(omni_graphs, tmp_path):
    from polygraphy.backend.common import BytesFromPath
    from polygraphy.backend.trt import EngineFromBytes, TrtRunner

    records = build_trt_engines(omni_graphs, tmp_path, ["fp16", "int8"], progress=False)
    gpu = gpu_info()
    rng = np.random.default_rng(0)
    feeds = {"vision": {"pixels": rng.uniform(-1, 1, (1, 3, 448, 448)).astype(np.float32)},
             "audio": {"mel": rng.uniform(-0.8, 1.0, (1, 80, 100)).astype(np.float32),
                       "past_kv": rng.standard_normal((2, 2, 1, 2, 50, 16)).astype(np.float32)}}
    for record in records:
        assert record["kind"] == "tensorrt", record
        assert record["gpu"] == gpu["name"] and record["compute_capability"] == gpu["compute_capability"]
        assert record["tensorrt"] and record["profiles"][0]
        feed = feeds[record["name"]]
        expected = open_session(omni_graphs / f"{record['name']}.fp32.onnx").run(None, feed)[0]
        with TrtRunner(EngineFromBytes(BytesFromPath(str(tmp_path / record["file"])))) as runner:
            got = list(runner.infer(feed).values())[0]
        rel = np.abs(got - expected).mean() / np.abs(expected).mean()
        assert rel < (2e-2 if record["precision"] == "fp16" else 0.15), (record["name"], record["precision"], rel)


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


@pytest.mark.gpu
@pytest.mark.skipif(NO_TRT is not None, reason=f"needs TensorRT and a GPU ({NO_TRT})")
def test_token2wav_engines_stream_like_onnx(tmp_path):
    """FP16 engines of the three token2wav graphs, driven as one stream, against the FP32 ONNX stream."""
    from polygraphy.backend.common import BytesFromPath
    from polygraphy.backend.trt import EngineFromBytes, TrtRunner

    from export.onnx import token2wav_parts
    from export.onnx.probes import stream_inputs
    from export.onnx.session import runner
    from export.torch_ref.tiny_parts import write_token2wav_assets
    from export.torch_ref.token2wav_ref import split_windows

    assets, graphs = tmp_path / "assets", tmp_path / "onnx"
    write_token2wav_assets(assets, seed=9)
    config, tensors = {**tiny_media_config("audio"), "hidden_size": 128}, {}
    config["init_audio"] = False  # token2wav only
    entries = build_onnx_parts(tensors.__getitem__, config, graphs, ["fp32", "fp16"], progress=False,
                               token2wav_dir=assets)
    terms = next(e["contract"] for e in entries if e["name"] == "token2wav_step")
    records = build_trt_engines(graphs, tmp_path / "trt", ["fp16"], parts=list(token2wav_parts.GRAPHS),
                                progress=False)
    assert all(r["kind"] == "tensorrt" for r in records), records
    noise = np.load(graphs / terms["noise_file"])
    inputs, codes = stream_inputs(seed=2, codes=60)

    def stream(runners):
        s = token2wav_parts.graph_stream(runners, terms, noise, seed=1)
        s.setup(inputs.prompt_tokens, inputs.prompt_mel, inputs.spk_embedding)
        mels = []
        for window, last in split_windows(codes):
            s.push(window, last)
            mels.append(s.last_mel)
        return np.concatenate(mels, axis=1)

    expected = stream({g: runner(open_session(graphs / f"{g}.fp32.onnx")) for g in token2wav_parts.GRAPHS})
    opened = [TrtRunner(EngineFromBytes(BytesFromPath(str(tmp_path / "trt" / f"{g}.fp16.engine"))))
              for g in token2wav_parts.GRAPHS]
    for r in opened:
        r.activate()
    try:
        engines = {g: (lambda feed, r=r: list(r.infer(feed).values())) for g, r in zip(token2wav_parts.GRAPHS, opened)}
        got = stream(engines)
    finally:
        for r in opened:
            r.deactivate()
    assert np.abs(got - expected).mean() / np.abs(expected).mean() < 2e-2
