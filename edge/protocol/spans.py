"""Delegate spans read from token ids (never from decoded text).

The reference's rules (docs/reference.md, "Delegate spans"): a span opens on
`<delegate>` and closes on `</delegate>` or `<|turn_eos|>`; it may run across
chunks (`<|speak|>`, `<|chunk_eos|>`, `<unit>`, `</unit>` inside it are skipped);
any other protocol token inside it, a nested `<delegate>`, a second span in one
model turn, an empty span or one over `max_chars` characters is rejected, and
the rest of that turn is hidden (never spoken) until `<|turn_eos|>`. Speech
goes on after a span's `</delegate>`; a stray `</delegate>` is never visible.
The parser is a streaming state machine: feed one token id at a time, as the
frontend decodes them:

    parser = DelegateParser(TokenMap.from_lookup(lambda s: llm.tokenize(s, special=True)), llm.piece)
    for tok in decoded_ids:
        step = parser.feed(tok, heard_ns)
        speech += step.visible           # words to speak, spans and protocol tokens removed
        if step.span:                    # -> DelegateSpan(step.span.instruction, step.span.opened_ns, ...)
            ...
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from edge.protocol.tokens import (CHUNK_EOS, DELEGATE_CLOSE, DELEGATE_OPEN, SPEAK, TURN_EOS, UNIT_CLOSE, UNIT_OPEN,
                                 TokenMap)

MAX_SPAN_CHARS = 4000


@dataclass
class Span:
    """A closed delegate span: the instruction, what the model had heard when it opened, and what closed it."""

    instruction: str
    opened_ns: int
    closed_by: str


@dataclass
class Step:
    """What one token did: visible bytes to speak/show, a closed span, or a voided one (with why)."""

    visible: bytes = b""
    span: Span | None = None
    voided: str | None = None


class DelegateParser:
    OUTSIDE, INSIDE, VOID = "outside", "inside", "void"  # VOID: a span was rejected; hidden until the turn ends

    def __init__(self, tokens: TokenMap, piece: Callable[[int], bytes], max_chars: int = MAX_SPAN_CHARS) -> None:
        self.tokens = tokens
        self.piece = piece  # token id -> its bytes (a byte-level BPE piece may be a partial UTF-8 sequence)
        self.max_chars = max_chars
        self._open, self._close, self._eos = (tokens.id(DELEGATE_OPEN), tokens.id(DELEGATE_CLOSE),
                                              tokens.id(TURN_EOS))
        self._skipped = {tokens.id(t) for t in (SPEAK, CHUNK_EOS, UNIT_OPEN, UNIT_CLOSE)}  # chunk seams in a span
        self.reset()

    def reset(self) -> None:
        self.state = self.OUTSIDE
        self.turn_used = False  # a span was already taken in this turn
        self.opened_ns = 0
        self.buf = bytearray()

    def get_state(self) -> dict:
        """What a restarted frontend needs to go on mid-span (edge/frontend/venus/chunk_loop.py export_state)."""
        return {"state": self.state, "turn_used": self.turn_used, "opened_ns": self.opened_ns, "buf": bytes(self.buf)}

    def set_state(self, st: dict) -> None:
        self.state, self.turn_used, self.opened_ns = st["state"], st["turn_used"], st["opened_ns"]
        self.buf = bytearray(st["buf"])

    def _void(self, why: str) -> Step:
        self.state, self.buf = self.VOID, bytearray()
        return Step(voided=f"{why}; the rest of the turn is not spoken")

    def feed(self, token_id: int, t_ns: int) -> Step:
        """`t_ns`: what the model had heard when it wrote this token (a span's evidence cutoff)."""
        if token_id == self._eos:  # the turn ends: a span still open closes with it, and a new turn may delegate
            step = self._close_span(TURN_EOS) if self.state == self.INSIDE else Step()
            self.state, self.turn_used, self.buf = self.OUTSIDE, False, bytearray()
            return step
        name = self.tokens.name(token_id)
        if self.state == self.VOID:
            return Step()
        if self.state == self.OUTSIDE:
            if token_id == self._open:
                if self.turn_used:
                    return self._void("a second delegate span in one turn was rejected")
                self.state, self.opened_ns, self.buf = self.INSIDE, t_ns, bytearray()
                return Step()
            return Step(visible=b"" if name is not None else self.piece(token_id))
        # inside a span
        if token_id == self._open:
            return self._void("a nested <delegate> voided the span")
        if token_id == self._close:
            return self._close_span(DELEGATE_CLOSE)
        if token_id in self._skipped:
            return Step()
        if name is not None:
            return self._void(f"{name} inside a delegate span voided it")
        self.buf += self.piece(token_id)
        if len(self.buf) > self.max_chars and len(self.buf.decode("utf-8", "ignore")) > self.max_chars:
            return self._void(f"the delegate span passed {self.max_chars} characters and was voided")
        return Step()

    def _close_span(self, closed_by: str) -> Step:
        text = self.buf.decode("utf-8", "replace").strip()
        if not text:
            return self._void("an empty delegate span was rejected")
        self.state, self.buf = self.OUTSIDE, bytearray()
        self.turn_used = True
        return Step(span=Span(text, self.opened_ns, closed_by))
