"""A native TensorRT engine as a graph runner (GPU machines only; tested under the `gpu` marker).

Inputs are copied to the device, shapes set per call (dynamic axes), outputs
sized from the engine after shape inference and copied back. Device buffers
come from torch's CUDA allocator (GPU images ship torch with CUDA).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


class TrtEngine:
    def __init__(self, path: Path) -> None:
        try:
            import tensorrt as trt
        except ImportError:
            raise RuntimeError(f"TensorRT is not installed, so the engine {path.name} cannot load") from None
        try:
            import torch
            if not torch.cuda.is_available():
                raise RuntimeError(f"no CUDA GPU is visible, so the engine {path.name} cannot load")
        except ImportError:
            raise RuntimeError(f"the engine {path.name} needs torch with CUDA for device buffers") from None
        self.torch, self.trt = torch, trt
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
        self.stream = torch.cuda.Stream()

    def __call__(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        torch, trt = self.torch, self.trt
        keep = []
        for name in self.inputs:
            t = torch.from_numpy(np.ascontiguousarray(feed[name])).cuda()
            keep.append(t)
            self.context.set_input_shape(name, tuple(t.shape))
            self.context.set_tensor_address(name, t.data_ptr())
        outs = []
        for name in self.outputs:
            shape = tuple(self.context.get_tensor_shape(name))
            dtype = torch.from_numpy(np.zeros(0, trt.nptype(self.engine.get_tensor_dtype(name)))).dtype
            t = torch.empty(shape, dtype=dtype, device="cuda")
            self.context.set_tensor_address(name, t.data_ptr())
            outs.append(t)
        if not self.context.execute_async_v3(self.stream.cuda_stream):
            raise RuntimeError("TensorRT execution failed")
        self.stream.synchronize()
        return [o.cpu().numpy() for o in outs]
