"""Delegate spans from token ids, and protocol-token stripping."""
from __future__ import annotations

import pytest

from edge.protocol.spans import DelegateParser
from edge.protocol.strip import strip_protocol_tokens
from edge.protocol.tokens import PROTOCOL_TOKENS, TokenMap, TokenMapError
from harness_helpers import feed_all

TOKENS = TokenMap({t: 1000 + i for i, t in enumerate(PROTOCOL_TOKENS)})


def ids(*parts: str) -> list[int]:
    """Protocol tokens by name, anything else as one id per byte (a byte-level vocabulary)."""
    out: list[int] = []
    for p in parts:
        out += [TOKENS.id(p)] if p in PROTOCOL_TOKENS else list(p.encode())
    return out


def parser(max_chars: int = 4000) -> DelegateParser:
    return DelegateParser(TOKENS, lambda t: bytes([t]), max_chars)


def test_span_closes_on_delegate_close_and_keeps_visible_text():
    vis, spans, void = feed_all(parser(), ids("<|speak|>", "Let me check. ", "<delegate>", "weather in Paris",
                                              "</delegate>", "<|turn_eos|>"), 5)
    assert vis == b"Let me check. "
    assert [(s.instruction, s.opened_ns, s.closed_by) for s in spans] == [("weather in Paris", 5, "</delegate>")]
    assert void == []


def test_span_closes_on_turn_eos():
    _, spans, _ = feed_all(parser(), ids("<delegate>", "book a table", "<|turn_eos|>"), 0)
    assert spans[0].instruction == "book a table" and spans[0].closed_by == "<|turn_eos|>"


def test_nested_open_voids_the_span_and_hides_the_rest_of_the_turn():
    p = parser()
    vis, spans, void = feed_all(p, ids("<delegate>", "a", "<delegate>", "b", "</delegate>", "after"), 0)
    assert spans == [] and void == ["a nested <delegate> voided the span; the rest of the turn is not spoken"]
    assert vis == b""  # where the private text ends cannot be told, so nothing more of this turn is spoken
    vis, _, _ = feed_all(p, ids("<|turn_eos|>", "<|speak|>", "next turn"), 0)
    assert vis == b"next turn"


def test_one_span_per_turn_then_a_new_turn_allows_another():
    p = parser()
    vis, spans, void = feed_all(p, ids("<delegate>", "one", "</delegate>", "said ", "<delegate>", "two",
                                       "</delegate>", "hidden"), 0)
    assert [s.instruction for s in spans] == ["one"] and len(void) == 1
    assert vis == b"said "  # speech goes on after a span; after the rejected second one it stops
    _, spans, _ = feed_all(p, ids("<|turn_eos|>", "<delegate>", "three", "</delegate>"), 0)
    assert [s.instruction for s in spans] == ["three"]


@pytest.mark.parametrize("inside", ["<|listen|>", "<image>", "</backend>"])
def test_other_protocol_tokens_inside_a_span_void_it(inside):
    vis, spans, void = feed_all(parser(), ids("<delegate>", "find", inside, "it", "</delegate>", "x"), 0)
    assert spans == [] and vis == b"" and inside in void[0]


def test_an_empty_span_is_rejected_and_a_stray_close_is_never_spoken():
    vis, spans, void = feed_all(parser(), ids("ok ", "</delegate>", "then ", "<delegate>", "  ", "</delegate>",
                                              "more"), 0)
    assert vis == b"ok then " and spans == [] and "empty" in void[0]


def test_over_4000_characters_voids():
    _, spans, void = feed_all(parser(), ids("<delegate>", "x" * 4001, "</delegate>"), 0)
    assert spans == [] and "4000 characters" in void[0]
    _, spans, _ = feed_all(parser(), ids("<delegate>", "é" * 4000, "</delegate>"), 0)  # characters, not bytes
    assert len(spans[0].instruction) == 4000


def test_a_span_runs_across_chunk_seams_and_utf8_splits_join():
    p = parser()
    _, spans, _ = feed_all(p, ids("<delegate>", "caf", "<|chunk_eos|>", "</unit>", "<unit>", "<|speak|>", "é?",
                                  "</delegate>"), 0)
    assert spans[0].instruction == "café?"


def test_token_map_refuses_missing_or_split_tokens():
    with pytest.raises(TokenMapError, match="lacks protocol token"):
        TokenMap({"<|speak|>": 1})
    with pytest.raises(TokenMapError, match="not one"):
        TokenMap.from_lookup(lambda s: [1, 2])


@pytest.mark.parametrize("text", [
    "<delegate>x</delegate>", "</backend>", "< DELEGATE >", "<dele<backend>gate>", "＜delegate＞",
    "<del\u200begate>", "<|turn_eos|>", "<| speak |>", "<|im_end|>", "</ backend >",
])
def test_strip_protocol_tokens_leaves_none(text):
    out = strip_protocol_tokens(f"ok {text} fine")
    for t in PROTOCOL_TOKENS:
        assert t not in out
    assert "delegate>" not in out.lower() and "backend>" not in out.lower() and "<|" not in out
    assert out.startswith("ok") and out.endswith("fine")
