"""Graph runners: onnxruntime with providers TensorRT > CUDA > CPU, or a native TensorRT engine.

Either way a runner is `feed dict -> list of outputs` over the graph's declared
inputs, so the encoders and token2wav do not care which one they got.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import numpy as np

log = logging.getLogger(__name__)
PREFERENCE = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")
Runner = Callable[[dict[str, np.ndarray]], list[np.ndarray]]


def choose_providers(device: str, available: list[str]) -> list[str]:
    """The providers to ask for, best first; `device` "cpu" keeps to the CPU."""
    if device == "cpu":
        return ["CPUExecutionProvider"]
    chosen = [p for p in PREFERENCE if p in available]
    return chosen or ["CPUExecutionProvider"]


class OnnxGraph:
    def __init__(self, path: Path, device: str = "auto", threads: int = 1, cache_dir: Path | None = None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        # No busy-waiting after a run: llama.cpp decodes right after the encoders on the same cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if ".fp16." in path.name:  # the CPU NCHWc layout pass mishandles FP16 convolutions
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        providers: list = choose_providers(device, ort.get_available_providers())
        if "TensorrtExecutionProvider" in providers and cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
            providers[providers.index("TensorrtExecutionProvider")] = (
                "TensorrtExecutionProvider", {"trt_engine_cache_enable": True, "trt_engine_cache_path": str(cache_dir),
                                              "trt_fp16_enable": ".fp16." in path.name})
        try:
            self.session = ort.InferenceSession(str(path), options, providers=providers)
        except Exception as exc:  # onnxruntime raises its own exception types
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise RuntimeError(f"onnxruntime cannot load {path.name}: {first}") from None
        self.name = path.stem
        self.providers = self.session.get_providers()
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.input_shapes = {i.name: i.shape for i in self.session.get_inputs()}
        self.outputs = [o.name for o in self.session.get_outputs()]

    def __call__(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        missing = [n for n in self.inputs if n not in feed]
        if missing:
            raise ValueError(f"{self.name} needs input(s) {', '.join(missing)}")
        return self.session.run(None, {n: np.ascontiguousarray(feed[n]) for n in self.inputs})


def open_graph(name: str, onnx: Path, engine: Path | None, device: str, threads: int,
               cache_dir: Path | None = None) -> Runner:
    """A native engine when one is usable here, else onnxruntime; logs which backend runs the graph."""
    if engine is not None and device != "cpu":
        from edge.backends.trt_engine import TrtEngine

        try:
            runner = TrtEngine(engine)
            log.info("venus: %s runs on TensorRT engine %s", name, engine.name)
            return runner
        except RuntimeError as exc:
            log.warning("venus: %s; %s runs from ONNX instead", exc, name)
    graph = OnnxGraph(onnx, device, threads, cache_dir)
    log.info("venus: %s runs in onnxruntime on %s", name, graph.providers[0])
    return graph
