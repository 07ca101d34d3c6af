"""GPU paths: onnxruntime's CUDA/TensorRT providers and native TensorRT engines (run only where a GPU is)."""
from __future__ import annotations

import numpy as np
import pytest

from edge.bundle.reader import open_bundle
from edge.frontend.venus.encoders import AudioEncoder
from edge.backends.onnx import OnnxGraph
from kernels.logmel import log_mel

from venus_support import speechy



def _anything_gpu() -> bool:
    """Checked before any fixture, so a CPU machine skips without exporting bundles."""
    import importlib.util

    import llama_cpp

    try:
        import onnxruntime as ort
        providers = set(ort.get_available_providers())
    except ImportError:
        providers = set()
    return bool(providers & {"TensorrtExecutionProvider", "CUDAExecutionProvider"}) or \
        importlib.util.find_spec("tensorrt") is not None or bool(llama_cpp.llama_supports_gpu_offload())


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _anything_gpu(), reason="no GPU backend on this machine")]


def _gpu_providers() -> list[str]:
    ort = pytest.importorskip("onnxruntime")
    have = [p for p in ("TensorrtExecutionProvider", "CUDAExecutionProvider") if p in ort.get_available_providers()]
    if not have:
        pytest.skip("no CUDA or TensorRT execution provider in this onnxruntime")
    return have


def test_gpu_provider_matches_cpu_on_the_audio_graph(audio_bundle):
    _gpu_providers()
    b = open_bundle(audio_bundle)
    gpu = OnnxGraph(b.graphs["audio"], "auto", 1, audio_bundle / ".cache" / "trt")
    cpu = OnnxGraph(b.graphs["audio"], "cpu", 1)
    assert gpu.providers[0] in ("TensorrtExecutionProvider", "CUDAExecutionProvider")
    mel = log_mel(speechy(1.0))
    a = AudioEncoder(gpu, gpu.input_shapes, b.runtime.audio).encode_mel(mel)
    c = AudioEncoder(cpu, cpu.input_shapes, b.runtime.audio).encode_mel(mel)
    np.testing.assert_allclose(a, c, rtol=1e-2, atol=1e-2)


def test_native_engine_matches_onnx(audio_bundle, tmp_path):
    """An engine from the one builder (venus-export engines), found by the bundle reader, run without torch."""
    import shutil

    pytest.importorskip("tensorrt")
    from edge.bundle import engines
    from edge.frontend.venus.frontend import graph as open_part
    from edge.bundle.settings import VenusSettings
    from export.trt.builder import build_engines

    try:
        engines.device_key()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    bundle = shutil.copytree(audio_bundle, tmp_path / "bundle")
    assert build_engines(bundle).current
    b = open_bundle(bundle)
    assert "audio" in b.engines, b.notes
    engine = open_part(b, "audio", VenusSettings())  # what the Venus frontend opens: the engine
    assert type(engine).__name__ == "TrtEngine"
    graph = OnnxGraph(b.graphs["audio"], "cpu", 1)
    mel = log_mel(speechy(1.0))
    a = AudioEncoder(engine, engine.input_shapes, b.runtime.audio).encode_mel(mel)
    c = AudioEncoder(graph, graph.input_shapes, b.runtime.audio).encode_mel(mel)
    np.testing.assert_allclose(a, c, rtol=1e-2, atol=1e-2)


def test_llm_layers_on_the_gpu_give_the_cpu_decision(audio_bundle):
    import llama_cpp

    if not llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama-cpp-python build has no GPU offload")
    from edge.backends.llama import LlamaModel

    b = open_bundle(audio_bundle)
    tokens = list(range(100, 140))
    out = []
    for layers in (0, 99):
        m = LlamaModel(b.llm, 256, 1, n_gpu_layers=layers)
        try:
            out.append(m.prefill_tokens(tokens).copy())
        finally:
            m.close()
    assert int(np.argmax(out[0])) == int(np.argmax(out[1]))
    np.testing.assert_allclose(out[0], out[1], rtol=5e-2, atol=5e-2)
