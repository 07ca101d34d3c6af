"""ONNX export of the media encoders and token2wav, with parity checks against the PyTorch reference.

`build_onnx_parts(get, config, out_dir, precisions)` writes `<part>.<precision>.onnx` files and
returns their manifest entries; `verify_onnx_parts(bundle_dir, get, config)` re-runs each graph
against the torch reference and returns one row per part and precision.
"""

from __future__ import annotations

import importlib
from typing import Any

# The builders import torch; they load on first use, so that export.onnx.precision (which venus-quant uses to
# make the precisions a bundle lacks) needs only onnx and onnxruntime.
_LAZY = {"build_onnx_parts": "export.onnx.build", "verify_onnx_parts": "export.onnx.verify",
         "TOLERANCES": "export.onnx.verify"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'export.onnx' has no attribute {name!r}")


__all__ = ["TOLERANCES", "build_onnx_parts", "verify_onnx_parts"]
