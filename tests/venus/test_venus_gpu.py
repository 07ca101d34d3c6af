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
    b = open_bundle(audio_bundle, verify_hashes=False)
    gpu = OnnxGraph(b.graphs["audio"], "auto", 1, audio_bundle / ".cache" / "trt")
    cpu = OnnxGraph(b.graphs["audio"], "cpu", 1)
    assert gpu.providers[0] in ("TensorrtExecutionProvider", "CUDAExecutionProvider")
    mel = log_mel(speechy(1.0))
    a = AudioEncoder(gpu, gpu.input_shapes, b.runtime.audio).encode_mel(mel)
    c = AudioEncoder(cpu, cpu.input_shapes, b.runtime.audio).encode_mel(mel)
    np.testing.assert_allclose(a, c, rtol=1e-2, atol=1e-2)


def test_native_engine_matches_onnx(audio_bundle, tmp_path):
    trt = pytest.importorskip("tensorrt")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from edge.backends.trt_engine import TrtEngine

    b = open_bundle(audio_bundle, verify_hashes=False)
    graph = OnnxGraph(b.graphs["audio"], "cpu", 1)
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    assert parser.parse(b.graphs["audio"].read_bytes())
    cfg = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    layers, _, _, heads, _, dim = graph.input_shapes["past_kv"]
    profile.set_shape("mel", (1, 80, 50), (1, 80, 100), (1, 80, 200))
    profile.set_shape("past_kv", (layers, 2, 1, heads, 0, dim), (layers, 2, 1, heads, 200, dim),
                      (layers, 2, 1, heads, 1400, dim))
    cfg.add_optimization_profile(profile)
    path = tmp_path / "audio.engine"
    path.write_bytes(bytes(builder.build_serialized_network(network, cfg)))
    engine = TrtEngine(path)
    mel = log_mel(speechy(1.0))
    a = AudioEncoder(engine, engine.input_shapes, b.runtime.audio).encode_mel(mel)
    c = AudioEncoder(graph, graph.input_shapes, b.runtime.audio).encode_mel(mel)
    np.testing.assert_allclose(a, c, rtol=1e-2, atol=1e-2)


def test_llm_layers_on_the_gpu_give_the_cpu_decision(audio_bundle):
    import llama_cpp

    if not llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama-cpp-python build has no GPU offload")
    from edge.backends.llama import LlamaModel

    b = open_bundle(audio_bundle, verify_hashes=False)
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
