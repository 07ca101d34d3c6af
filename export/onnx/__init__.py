"""ONNX export of the media encoders and token2wav, with parity checks against the PyTorch reference.

`build_onnx_parts(get, config, out_dir, precisions)` writes `<part>.<precision>.onnx` files and
returns their manifest entries; `verify_onnx_parts(bundle_dir, get, config)` re-runs each graph
against the torch reference and returns one row per part and precision.
"""

from export.onnx.build import build_onnx_parts
from export.onnx.verify import TOLERANCES, verify_onnx_parts

__all__ = ["TOLERANCES", "build_onnx_parts", "verify_onnx_parts"]
