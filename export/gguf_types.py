"""GGUF file types (llama.cpp's ftypes) for the build: which of edge/formats.py's types this llama.cpp can write,
read from a command line or a GGUF's header; used by the builder, verify, the planner and the sweep.
"""
from __future__ import annotations

from edge.formats import GGUF_TYPES as TYPES
from edge.formats import GgufType
from export.errors import ExportError

__all__ = ["TYPES", "GgufType", "GgufTypeError", "by_ftype", "gguf_type", "known_types", "parse_types"]


class GgufTypeError(ExportError, ValueError):
    """A type name nobody knows: a one-sentence ExportError for venus-export, a ValueError for venus-quant."""


def known_types() -> list[str]:
    """Every type this llama.cpp build can write, highest precision first."""
    return [n for n, t in TYPES.items() if t.ftype is not None]


def gguf_type(name: str) -> GgufType:
    """The type named (any case), or one sentence naming the ones this llama.cpp can write."""
    t = TYPES.get(name.strip().upper())
    if t is None or t.ftype is None:
        raise GgufTypeError(f"unknown GGUF type {name!r}; choose from {', '.join(known_types())}")
    return t


def by_ftype(ftype: int) -> GgufType | None:
    """The type of a GGUF's general.file_type value, if it is one of TYPES."""
    return next((t for t in TYPES.values() if t.ftype == ftype), None)


def parse_types(spec: str) -> list[GgufType]:
    """'F16,Q8_0,Q4_K_M' -> types, highest precision first, without repeats."""
    names = [s for s in (p.strip() for p in spec.split(",")) if s]
    if not names:
        raise GgufTypeError("--types is empty; give a comma-separated list such as F16,Q8_0,Q4_K_M")
    seen: dict[str, GgufType] = {}
    for n in names:
        t = gguf_type(n)
        seen.setdefault(t.name, t)
    return sorted(seen.values(), key=lambda t: -t.bpw)
