"""TensorRT engines (FP16, INT8) from a bundle's ONNX graphs, with the shape profiles the runtime uses.

`build_trt_engines(onnx_dir, out_dir, precisions)` returns one manifest record per part and
precision: an engine (GPU, compute capability, TensorRT version, profiles) or a
"kept ONNX because ..." record when TensorRT, a GPU, or support for the graph is missing.
"""

from export.trt.builder import build_trt_engines, environment_reason, gpu_info, tensorrt_version
from export.trt.profiles import DIMENSIONS, blockers, profile_for

__all__ = ["DIMENSIONS", "blockers", "build_trt_engines", "environment_reason", "gpu_info", "profile_for",
           "tensorrt_version"]
