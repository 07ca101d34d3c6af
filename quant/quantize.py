"""Quantize a GGUF with llama.cpp's own quantizer, optionally guided by an importance matrix."""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import llama_cpp as ll
import numpy as np

from quant.engine import quiet_llama
from quant.types import GgufType


def _imatrix_array(imatrix: dict[str, np.ndarray]):
    """A NULL-terminated C array of llama_model_imatrix_data; the arrays must outlive the call."""
    keep = [np.ascontiguousarray(v, dtype=np.float32) for v in imatrix.values()]
    entries = (ll.llama_model_imatrix_data * (len(keep) + 1))()
    for i, (name, arr) in enumerate(zip(imatrix, keep)):
        entries[i].name = name.encode()
        entries[i].data = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        entries[i].size = arr.size
    entries[len(keep)].name = None
    return entries, keep


def quantize(src: str | Path, dst: str | Path, qtype: GgufType, nthread: int = 1,
             imatrix: dict[str, np.ndarray] | None = None) -> Path:
    """Write `dst` as `qtype`; the file appears only when complete, so a killed run leaves no half file."""
    quiet_llama()
    src, dst = Path(src), Path(dst)
    if not src.is_file():
        raise FileNotFoundError(f"cannot quantize {src}: no such file")
    if qtype.needs_imatrix and not imatrix:
        raise ValueError(f"{qtype.name} needs an importance matrix; run the sweep with --imatrix on")
    tmp = dst.with_name(dst.name + ".part")
    params = ll.llama_model_quantize_default_params()
    params.nthread = nthread
    params.ftype = qtype.ftype
    params.allow_requantize = True  # a Q8_0 reference (a bundle without F16) is quantized again
    keep = None
    if imatrix:
        entries, keep = _imatrix_array(imatrix)
        params.imatrix = ctypes.cast(entries, ctypes.POINTER(ll.llama_model_imatrix_data))
    rc = ll.llama_model_quantize(str(src).encode(), str(tmp).encode(), ctypes.byref(params))
    del keep
    if rc != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"llama.cpp could not quantize {src.name} to {qtype.name} (code {rc})")
    os.replace(tmp, dst)
    return dst
