"""A native TensorRT engine as a graph runner (GPU machines only; tested under the `gpu` marker).

Why TensorRT's Python API with cuda-python, not onnxruntime's TensorRT provider:
the engines are the ones `venus-export engines` built and stamped for this
device; the provider builds and caches its own engines from the ONNX graph and
can only take a prebuilt one through a wrapper model, so it would be a second
builder with its own cache keys. cuda-python is CUDA's own thin binding (a few
MB, no torch, which a Jetson install never has); it gives device memory, copies
and a stream, which is all an engine needs.

Inputs are copied to the device, shapes set per call (dynamic axes), outputs
sized from the engine after shape inference and copied back. Device buffers are
kept per tensor and grown when a call needs more.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def _cudart():
    try:
        from cuda.bindings import runtime  # cuda-python 12.6 and later
    except ImportError:
        try:
            from cuda import cudart as runtime  # older cuda-python
        except ImportError:
            return None
    return runtime


class TrtEngine:
    def __init__(self, path: Path) -> None:
        try:
            import tensorrt as trt
        except ImportError:
            raise RuntimeError(f"TensorRT is not installed, so the engine {path.name} cannot load") from None
        cudart = _cudart()
        if cudart is None:
            raise RuntimeError(f"the engine {path.name} needs CUDA's Python bindings (pip install cuda-python)")
        self.trt, self.cudart = trt, cudart
        err, self.stream = cudart.cudaStreamCreate()
        if err != cudart.cudaError_t.cudaSuccess:
            raise RuntimeError(f"no CUDA GPU is usable ({err}), so the engine {path.name} cannot load")
        logger = trt.Logger(trt.Logger.WARNING)
        engine = trt.Runtime(logger).deserialize_cuda_engine(path.read_bytes())
        if engine is None:
            raise RuntimeError(f"TensorRT could not deserialize {path.name} (built by another TensorRT version?)")
        self.engine = engine
        self.context = engine.create_execution_context()
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        self.inputs = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        self.outputs = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.OUTPUT]
        self.input_shapes = {n: [d if d >= 0 else None for d in engine.get_tensor_shape(n)] for n in self.inputs}
        self.dtypes = {n: np.dtype(trt.nptype(engine.get_tensor_dtype(n))) for n in names}
        self.buffers: dict[str, tuple[int, int]] = {}  # tensor -> (device pointer, bytes)

    def _check(self, result, what: str):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != self.cudart.cudaError_t.cudaSuccess:
            raise RuntimeError(f"CUDA failed to {what}: {err}")
        return rest[0] if rest else None

    def _buffer(self, name: str, nbytes: int) -> int:
        ptr, size = self.buffers.get(name, (0, 0))
        if size < nbytes:
            if ptr:
                self._check(self.cudart.cudaFree(ptr), "free a buffer")
            ptr = int(self._check(self.cudart.cudaMalloc(max(nbytes, 1)), f"allocate {nbytes} bytes"))
            self.buffers[name] = (ptr, nbytes)
        return ptr

    def __call__(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        rt = self.cudart
        h2d, d2h = rt.cudaMemcpyKind.cudaMemcpyHostToDevice, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost
        missing = [n for n in self.inputs if n not in feed]
        if missing:
            raise ValueError(f"the engine needs input(s) {', '.join(missing)}")
        host_in = []
        for name in self.inputs:
            x = np.ascontiguousarray(feed[name], dtype=self.dtypes[name])
            host_in.append(x)  # alive until the copy has run
            ptr = self._buffer(name, x.nbytes)
            self.context.set_input_shape(name, tuple(x.shape))
            self.context.set_tensor_address(name, ptr)
            self._check(rt.cudaMemcpyAsync(ptr, x.ctypes.data, x.nbytes, h2d, self.stream), "copy an input")
        outs = []
        for name in self.outputs:
            out = np.empty(tuple(self.context.get_tensor_shape(name)), self.dtypes[name])
            self.context.set_tensor_address(name, self._buffer(name, out.nbytes))
            outs.append(out)
        if not self.context.execute_async_v3(int(self.stream)):
            raise RuntimeError("TensorRT execution failed")
        for name, out in zip(self.outputs, outs):
            self._check(rt.cudaMemcpyAsync(out.ctypes.data, self.buffers[name][0], out.nbytes, d2h, self.stream),
                        "copy an output")
        self._check(rt.cudaStreamSynchronize(self.stream), "finish the stream")
        return outs

    def close(self) -> None:
        for ptr, _ in self.buffers.values():
            self.cudart.cudaFree(ptr)
        self.buffers.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: CUDA may be gone already
            pass
