"""GGUF quantization with llama.cpp's own quantizer (`llama_model_quantize`), optionally guided by an
importance matrix: the one front-end of venus-export build and venus-quant sweep."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

from export.errors import ExportError
from export.gguf_types import GgufType, gguf_type


def _imatrix_array(ll, imatrix: dict[str, np.ndarray]):
    """A NULL-terminated C array of llama_model_imatrix_data; the arrays must outlive the call."""
    keep = [np.ascontiguousarray(v, dtype=np.float32) for v in imatrix.values()]
    entries = (ll.llama_model_imatrix_data * (len(keep) + 1))()
    for i, (name, arr) in enumerate(zip(imatrix, keep)):
        entries[i].name = name.encode()
        entries[i].data = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        entries[i].size = arr.size
    entries[len(keep)].name = None
    return entries, keep


def quantize(src: Path, dst: Path, qtype: str | GgufType, nthread: int = 0,
             imatrix: dict[str, np.ndarray] | None = None) -> Path:
    """Write `dst` as `src` quantized to `qtype` (through a .partial file, renamed when complete)."""
    from edge.backends.llama import library

    t = gguf_type(qtype) if isinstance(qtype, str) else qtype
    src, dst = Path(src), Path(dst)
    if not src.is_file():
        raise ExportError(f"Cannot quantize {src}: the file does not exist.")
    if t.needs_imatrix and not imatrix:
        raise ExportError(f"{t.name} needs an importance matrix (llama.cpp refuses it without one); "
                          "make it with venus-quant sweep --imatrix on --keep-models.")
    ll = library()
    params = ll.llama_model_quantize_default_params()
    params.ftype = t.ftype
    params.nthread = nthread or min(4, os.cpu_count() or 1)
    params.allow_requantize = True  # a Q8_0 reference (a bundle without F16) is quantized again
    keep = None
    if imatrix:
        entries, keep = _imatrix_array(ll, imatrix)
        params.imatrix = ctypes.cast(entries, ctypes.POINTER(ll.llama_model_imatrix_data))
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".partial")
    rc = ll.llama_model_quantize(str(src).encode(), str(tmp).encode(), ctypes.byref(params))
    del keep
    if rc != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise ExportError(f"llama.cpp could not quantize {src.name} to {t.name} (code {rc}).")
    os.replace(tmp, dst)
    return dst
