"""TensorRT engines from a bundle's ONNX graphs, built on the device that runs them.

`build_engines(bundle)` (also `venus-export engines BUNDLE`) builds an engine per
graph under BUNDLE/engines/<device key>/ and reports on each; shapes.py holds
the shape ranges, rewrite.py the float64 demotion TensorRT needs.
"""

from export.trt.builder import Report, build_engines
from export.trt.shapes import DIMENSIONS, blockers, profile_for

__all__ = ["DIMENSIONS", "Report", "blockers", "build_engines", "profile_for"]
