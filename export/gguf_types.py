"""GGUF file types (llama.cpp's ftypes): one row per type, read by the builder, verify, the planner and the sweep.

Adding a type is one row in TYPES. Its llama.cpp file-type value is looked up by
name in llama_cpp (LLAMA_FTYPE_MOSTLY_<NAME>), so a type this build lacks is
listed but refused with a sentence.

Bits per weight are whole-file averages for an 8B model, llama.cpp's own figures:
the quantize tool's README table for Llama-3.1-8B, and for the types that table
leaves out (Q3_K_M, Q4_0, Q4_1, Q5_0, Q5_1) the size llama-quantize lists for
Llama-3-8B (same 8.03 B parameters) as bits per weight. They include the tensors a
mix keeps at higher precision (token table, output), so they size a whole model.
"""
from __future__ import annotations

from dataclasses import dataclass

from export.errors import ExportError


class GgufTypeError(ExportError, ValueError):
    """A type name nobody knows: a one-sentence ExportError for venus-export, a ValueError for venus-quant."""


@dataclass(frozen=True)
class GgufType:
    name: str  # as written on the command line and in bundle file names, e.g. "Q4_K_M"
    bpw: float  # bits per weight of a whole 8B model file (see the module docstring)
    imatrix: str = "optional"  # "needed": llama.cpp refuses the type without one; "ignored": it never reads one
    kl_limit: float = 0.5  # verify: KL(torch reference || GGUF) must stay under this
    top1_limit: float = 0.5  # verify: top-1 agreement with the torch reference must reach this
    planned: bool = False  # the planner lists it when no types are named

    @property
    def needs_imatrix(self) -> bool:
        return self.imatrix == "needed"

    @property
    def ftype(self) -> int | None:
        """llama.cpp's llama_ftype value, or None when this llama.cpp cannot write the type."""
        import llama_cpp

        value = getattr(llama_cpp, "LLAMA_FTYPE_ALL_F32" if self.name == "F32" else f"LLAMA_FTYPE_MOSTLY_{self.name}",
                        None)
        return None if value is None else int(value)


_T = GgufType
# Highest precision first. Verify's limits are generous enough for a real 8B model and tight enough to catch a
# wrong tensor map.
TYPES: dict[str, GgufType] = {t.name: t for t in (
    _T("F32", 32.0, "ignored", 1e-4, 0.99),
    _T("F16", 16.0, "ignored", 1e-3, 0.95, planned=True),
    _T("BF16", 16.0, "ignored", 2e-3, 0.95),
    _T("Q8_0", 8.5008, "ignored", 1e-2, 0.85, planned=True),
    _T("Q6_K", 6.5633, kl_limit=3e-2, planned=True),
    _T("Q5_1", 6.04),
    _T("Q5_K_M", 5.7036, kl_limit=5e-2, planned=True),
    _T("Q5_K_S", 5.5704, kl_limit=6e-2),
    _T("Q5_0", 5.57, kl_limit=6e-2),
    _T("Q4_1", 5.11),
    _T("Q4_K_M", 4.8944, kl_limit=0.15, planned=True),
    _T("IQ4_NL", 4.6818, kl_limit=0.2),
    _T("Q4_K_S", 4.6672, kl_limit=0.2),
    _T("Q4_0", 4.64, kl_limit=0.25),
    _T("IQ4_XS", 4.4597, kl_limit=0.2, planned=True),
    _T("Q3_K_L", 4.2979),
    _T("Q3_K_M", 4.00, planned=True),
    _T("IQ3_M", 3.7628, planned=True),
    _T("IQ3_S", 3.6606),
    _T("Q3_K_S", 3.6429),
    _T("IQ3_XS", 3.4977),
    _T("IQ3_XXS", 3.2548),
    _T("Q2_K", 3.1593, planned=True),
    _T("Q2_K_S", 2.9697),
    _T("IQ2_M", 2.9294),
    _T("IQ2_S", 2.7403, "needed"),
    _T("IQ2_XS", 2.5882, "needed"),
    _T("IQ2_XXS", 2.3824, "needed"),
    _T("IQ1_M", 2.1460, "needed"),
    _T("IQ1_S", 2.0042, "needed"),
)}


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
