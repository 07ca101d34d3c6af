"""Opening exported graphs in onnxruntime for checks, and running them with named feeds."""

from __future__ import annotations

import pathlib

import numpy as np

from export.errors import ExportError


def open_session(path: pathlib.Path, threads: int = 1):
    """A CPU session for `path`. FP16 graphs use extended (not layout) optimisation: onnxruntime
    1.32's NCHWc layout pass crashes on FP16 convolutions on CPU."""
    import onnxruntime as ort

    if not path.is_file():
        raise ExportError(f"The ONNX graph {path} is missing.")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if ".fp16." in path.name:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExportError(f"onnxruntime cannot load {path.name}: {first}.") from exc


def runner(session):
    """feed dict -> list of outputs, feeding only the inputs the graph declares."""
    names = [i.name for i in session.get_inputs()]

    def run(feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        return session.run(None, {n: np.ascontiguousarray(feed[n]) for n in names})

    return run
