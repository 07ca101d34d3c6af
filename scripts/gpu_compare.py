"""Each TensorRT engine of a bundle against onnxruntime on the CPU: the same inputs, the largest difference, and
the median time of each (scripts/gpu_check.sh runs it after `venus-export engines`).

Inputs are drawn at each engine's optimisation shape (the middle of its profile): floats from a normal
distribution, integers small and non-negative (ids, lengths), so every graph gets inputs it accepts.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

from edge.backends.onnx import OnnxGraph
from edge.backends.trt_engine import TrtEngine
from edge.bundle.reader import open_bundle


def inputs_for(engine: TrtEngine, rng: np.random.Generator) -> dict[str, np.ndarray]:
    feed = {}
    for name in engine.inputs:
        shape = tuple(engine.engine.get_tensor_profile_shape(name, 0)[1]) if None in engine.input_shapes[name] \
            else tuple(engine.input_shapes[name])
        dtype = engine.dtypes[name]
        if np.issubdtype(dtype, np.floating):
            feed[name] = (rng.standard_normal(shape) * 0.5).astype(np.float32)
        else:
            feed[name] = rng.integers(0, 8, shape).astype(dtype)
    return feed


def median_ms(run, feed, n: int = 10) -> float:
    run(feed)  # the first call pays allocation
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        run(feed)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def compare(bundle: Path) -> int:
    b = open_bundle(bundle)
    if not b.engines:
        print(f"{bundle.name}: no engine for this device ({'; '.join(b.notes) or 'none built'})")
        return 1
    bad = 0
    rng = np.random.default_rng(0)
    for name, path in sorted(b.engines.items()):
        try:
            engine, graph = TrtEngine(path), OnnxGraph(b.graphs[name], "cpu", 4)
            feed = inputs_for(engine, rng)
            onnx_feed = {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in feed.items()}
            got, want = engine(feed), graph(onnx_feed)
            diff = max(float(np.max(np.abs(np.asarray(g, np.float32) - np.asarray(w, np.float32))))
                       for g, w in zip(got, want))
            scale = max(float(np.max(np.abs(w))) for w in want) or 1.0
            trt_ms, ort_ms = median_ms(engine, feed), median_ms(graph, onnx_feed)
            ok = diff <= 2e-2 * scale + 1e-3
            bad += not ok
            print(f"{bundle.name} {name}: max |engine - onnxruntime| {diff:.3g} (outputs up to {scale:.3g}) "
                  f"{'agrees' if ok else 'DIFFERS'}; engine {trt_ms:.2f} ms, onnxruntime CPU {ort_ms:.2f} ms, "
                  f"x{ort_ms / trt_ms:.1f}")
        except Exception as exc:  # one graph's failure is reported, the others still run
            bad += 1
            print(f"{bundle.name} {name}: could not compare ({type(exc).__name__}: {exc})")
    return bad


if __name__ == "__main__":
    sys.exit(1 if sum(compare(Path(p)) for p in sys.argv[1:]) else 0)
