"""Bundle formats, one spelling for the build (export/, quant/) and the device (edge/): GGUF types and their pick
order, ONNX precisions, KV-cache types, and the boards a bundle is fitted to.

Adding a GGUF type is one row in GGUF_TYPES; its llama.cpp file-type value is looked up by name in llama_cpp
(LLAMA_FTYPE_MOSTLY_<NAME>), so a type this build lacks is listed but refused with a sentence (export/gguf_types.py).

GGUF bits per weight are whole-file averages for an 8B model, llama.cpp's own figures: the quantize tool's README
table for Llama-3.1-8B, and for the types that table leaves out (Q3_K_M, Q4_0, Q4_1, Q5_0, Q5_1) the size
llama-quantize lists for Llama-3-8B (same 8.03 B parameters) as bits per weight. They include the tensors a mix
keeps at higher precision (token table, output), so they size a whole model.
"""
from __future__ import annotations

from dataclasses import dataclass

VARIANTS: tuple[str, ...] = ("omni", "audio")  # what a bundle holds: the Omni model (audio and vision) or audio only


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
# Highest precision first: the order the device picks a bundle's GGUF in when none is named (BF16 before F16:
# the same size, and a bf16 checkpoint's own numbers). Verify's limits are generous enough for a real 8B model
# and tight enough to catch a wrong tensor map.
GGUF_TYPES: dict[str, GgufType] = {t.name: t for t in (
    _T("F32", 32.0, "ignored", 1e-4, 0.99),
    _T("BF16", 16.0, "ignored", 2e-3, 0.95),
    _T("F16", 16.0, "ignored", 1e-3, 0.95, planned=True),
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
GGUF_PICK_ORDER: tuple[str, ...] = tuple(GGUF_TYPES)

# ONNX graphs (and the TensorRT engines built from them): most precise first, the device's pick order; the
# bytes a weight takes (biases and norms stay fp32 whatever the precision).
ONNX_PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "int8")
ONNX_BYTES: dict[str, float] = {"fp32": 4.0, "fp16": 2.0, "int8": 1.0}

# llama.cpp's KV-cache types, the default first, with their bits per value (q8_0 and q4_0 carry a scale per block).
KV_TYPES: tuple[str, ...] = ("f16", "q8_0", "q4_0")
KV_BITS: dict[str, float] = {"f16": 16.0, "q8_0": 8.5, "q4_0": 4.5}


def listed(names: tuple[str, ...]) -> str:
    """('f16', 'q8_0', 'q4_0') -> 'f16, q8_0 or q4_0', for a sentence naming the choices."""
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


@dataclass(frozen=True)
class Board:
    name: str
    label: str
    memory_gib: float  # what the OS sees (Jetson: MemTotal after firmware carve-outs)
    os_reserve_gb: float  # kernel, system services, no desktop (turn it off on 8 GB boards)
    bandwidth_gbs: float
    ai_tops: float  # headline sparse INT8 TOPS; only scales the measured vision encode time
    unified: bool  # CPU and GPU share the memory (Jetson, CPU-only); False: a discrete card
    gpu: bool
    nvpmodel: str = ""  # power mode names, first choice first (matched against /etc/nvpmodel.conf)
    swap_gb: int = 0  # swap file for CPU-side pages; CUDA allocations never swap

    @property
    def jetson(self) -> bool:
        return self.name.startswith("orin-")


# The targets a bundle is fitted to (venus-export build --device), named in its manifest and checked on the device.
BOARDS: dict[str, Board] = {b.name: b for b in (
    Board("orin-agx-64", "Jetson AGX Orin 64GB", 61.4, 1.5, 204.8, 275, True, True, "MAXN", 0),
    Board("orin-agx-32", "Jetson AGX Orin 32GB", 30.6, 1.5, 204.8, 200, True, True, "MAXN", 0),
    Board("orin-nx-16", "Jetson Orin NX 16GB", 15.3, 1.2, 102.4, 100, True, True, "MAXN,MAXN_SUPER", 4),
    Board("orin-nx-8", "Jetson Orin NX 8GB", 7.4, 1.0, 102.4, 70, True, True, "MAXN,MAXN_SUPER", 4),
    Board("orin-nano-8", "Jetson Orin Nano 8GB", 7.4, 1.0, 68.0, 40, True, True, "15W", 4),
    Board("orin-nano-8-super", "Jetson Orin Nano 8GB (Super, JetPack 6.2)", 7.4, 1.0, 102.0, 67, True, True,
          "MAXN_SUPER", 4),
    Board("orin-nano-4", "Jetson Orin Nano 4GB", 3.4, 0.8, 34.0, 20, True, True, "10W", 2),
    Board("rtx-4090", "GeForce RTX 4090 (24 GB)", 23.6, 0.6, 1008.0, 1321, False, True),
    Board("cpu", "Laptop CPU (16 GB, dual-channel DDR5)", 15.3, 4.0, 60.0, 10, True, False),
)}
JETSON_BOARDS: tuple[str, ...] = tuple(name for name, b in BOARDS.items() if b.jetson)
