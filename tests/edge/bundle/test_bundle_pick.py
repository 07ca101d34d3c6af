"""The device picks a bundle's most precise GGUF and ONNX graphs when none is named, over every type the
exporter can build (one table for both: edge/formats.py)."""
from __future__ import annotations

from itertools import combinations

from edge.bundle.reader import GGUF_ORDER, ONNX_ORDER, _pick
from export.gguf_types import TYPES


def parts(*precisions: str) -> list[dict]:
    return [{"role": "llm", "kind": "gguf", "precision": p, "name": f"llm-{p}"} for p in precisions]


def test_a_bundle_with_two_types_runs_the_more_precise_one() -> None:
    # Q5_1 and IQ4_NL are types venus-export builds; a pick order that did not know them ran Q4_K_M instead.
    assert _pick(parts("Q4_K_M", "Q5_1"), "llm", GGUF_ORDER, None, "LLM GGUF")["precision"] == "Q5_1"
    assert _pick(parts("Q4_K_S", "IQ4_NL"), "llm", GGUF_ORDER, None, "LLM GGUF")["precision"] == "IQ4_NL"
    for a, b in combinations(TYPES.values(), 2):
        if a.bpw != b.bpw:
            best = max((a, b), key=lambda t: t.bpw).name
            assert _pick(parts(a.name, b.name), "llm", GGUF_ORDER, None, "LLM GGUF")["precision"] == best


def test_an_encoder_graph_is_picked_most_precise_first() -> None:
    graphs = [{"role": "audio", "precision": p} for p in ("int8", "fp16")]
    assert _pick(graphs, "audio", ONNX_ORDER, None, "audio graph")["precision"] == "fp16"
