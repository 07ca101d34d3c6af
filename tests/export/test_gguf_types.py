"""The one GGUF type table: every row is a type this llama.cpp writes, and every reader takes its figures."""
from __future__ import annotations

import pytest

from export import plan
from export.errors import ExportError
from export.gguf_types import TYPES, GgufTypeError, by_ftype, gguf_type, parse_types


def test_every_row_is_a_type_this_llama_cpp_writes_and_reads_back():
    for name, t in TYPES.items():
        assert t.ftype is not None, f"llama.cpp has no file type {name}"
        assert by_ftype(t.ftype) is t  # a GGUF's general.file_type names its row
    bits = [t.bpw for t in TYPES.values()]
    assert bits == sorted(bits, reverse=True)  # highest precision first: parse_types and the sweep rank by it


def test_planner_and_sweep_read_the_same_figure():
    # llama.cpp's own figure for a whole 8B model (its quantize README, Llama-3.1-8B)
    assert gguf_type("q4_k_m").bpw == plan.LLM_BITS["Q4_K_M"] == 4.8944
    assert set(plan.PLANNED) <= set(plan.LLM_BITS) and "Q4_K_M" in plan.PLANNED
    r = plan.plan_fit("orin-nx-16", "audio", "Q5_K_S", "fp16", 4096)  # any row is plannable, not a shortlist
    assert r.llm_type == "Q5_K_S"


def test_an_unknown_type_is_one_sentence_for_either_tool():
    with pytest.raises(GgufTypeError, match=r"unknown GGUF type 'Q4_K'; choose from F32, BF16, F16,") as e:
        parse_types("F16,Q4_K")
    assert isinstance(e.value, ExportError) and isinstance(e.value, ValueError)
