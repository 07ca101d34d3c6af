"""GGUF quantization with llama.cpp's own quantizer (`llama_model_quantize`), from the F16 base file."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from export.errors import ExportError


def ftype_of(type_name: str) -> int:
    """llama.cpp's file type for a name such as Q4_K_M, F16 or IQ4_XS."""
    import llama_cpp

    value = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{type_name.upper()}", None)
    if value is None:
        known = sorted(n[len("LLAMA_FTYPE_MOSTLY_"):] for n in dir(llama_cpp) if n.startswith("LLAMA_FTYPE_MOSTLY_"))
        raise ExportError(f"Unknown GGUF type {type_name!r}; llama.cpp knows {', '.join(known)}.")
    return int(value)


def quantize(src: Path, dst: Path, type_name: str, nthread: int = 0) -> None:
    """Write `dst` as `src` quantized to `type_name` (through a .partial file, renamed when complete)."""
    import llama_cpp
    from llama_cpp._logger import set_verbose

    set_verbose(False)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype_of(type_name)
    params.nthread = nthread or min(4, os.cpu_count() or 1)
    if not src.is_file():
        raise ExportError(f"Cannot quantize {src}: the file does not exist.")
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".partial")
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(tmp).encode(), ctypes.byref(params))
    if rc != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise ExportError(f"llama.cpp could not quantize {src.name} to {type_name} (code {rc}).")
    tmp.replace(dst)
