"""GGUF precisions: names as users write them, mapped to llama.cpp's file types."""
from __future__ import annotations

from dataclasses import dataclass

import llama_cpp

# Nominal bits per weight of the main matrices (llama.cpp's own figures); the
# sweep reports the real file size, these only order types before measuring.
_NOMINAL_BPW = {
    "F32": 32.0, "BF16": 16.0, "F16": 16.0, "Q8_0": 8.5, "Q6_K": 6.56,
    "Q5_K_M": 5.69, "Q5_K_S": 5.54, "Q5_1": 6.0, "Q5_0": 5.5, "Q4_K_M": 4.89,
    "Q4_K_S": 4.58, "IQ4_XS": 4.25, "IQ4_NL": 4.5, "Q4_1": 5.0, "Q4_0": 4.5,
    "Q3_K_L": 4.27, "Q3_K_M": 3.91, "Q3_K_S": 3.5, "IQ3_M": 3.66, "IQ3_S": 3.44,
    "IQ3_XS": 3.3, "IQ3_XXS": 3.06, "Q2_K": 3.35, "Q2_K_S": 3.0, "IQ2_M": 2.7,
    "IQ2_S": 2.5, "IQ2_XS": 2.31, "IQ2_XXS": 2.06, "IQ1_M": 1.75, "IQ1_S": 1.56,
}
# llama.cpp refuses these without an importance matrix.
_NEEDS_IMATRIX = {"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_S", "IQ1_M"}


@dataclass(frozen=True)
class GgufType:
    name: str  # as written on the command line, e.g. "Q4_K_M"
    ftype: int  # llama_ftype value passed to llama_model_quantize
    nominal_bpw: float
    needs_imatrix: bool


def _ftype_of(name: str) -> int | None:
    attr = "LLAMA_FTYPE_ALL_F32" if name == "F32" else f"LLAMA_FTYPE_MOSTLY_{name}"
    value = getattr(llama_cpp, attr, None)
    return int(value) if value is not None else None


def known_types() -> list[str]:
    """Every type this llama.cpp build can write, highest precision first."""
    names = [n for n in _NOMINAL_BPW if _ftype_of(n) is not None]
    return sorted(names, key=lambda n: -_NOMINAL_BPW[n])


def gguf_type(name: str) -> GgufType:
    key = name.strip().upper()
    ftype = _ftype_of(key) if key in _NOMINAL_BPW else None
    if ftype is None:
        raise ValueError(f"unknown GGUF type {name!r}; choose from {', '.join(known_types())}")
    return GgufType(key, ftype, _NOMINAL_BPW[key], key in _NEEDS_IMATRIX)


def parse_types(spec: str) -> list[GgufType]:
    """Parse 'F16,Q8_0,Q4_K_M' into types, highest precision first, without repeats."""
    names = [s for s in (p.strip() for p in spec.split(",")) if s]
    if not names:
        raise ValueError("--types is empty; give a comma-separated list such as F16,Q8_0,Q4_K_M")
    seen: dict[str, GgufType] = {}
    for n in names:
        t = gguf_type(n)
        seen.setdefault(t.name, t)
    return sorted(seen.values(), key=lambda t: -t.nominal_bpw)
