"""Delegate spans read from token ids (never from decoded text).

Rules (docs/protocol.md, "Delegate spans"): a span opens on `<delegate>` and
closes on `</delegate>` or `<|turn_eos|>`; a nested `<delegate>` voids it; at
most one span per model turn; at most `max_chars` characters. The parser is a
streaming state machine: feed one token id at a time, as the frontend decodes them:

    parser = DelegateParser(TokenMap.from_lookup(lambda s: llm.tokenize(s, special=True)), llm.piece)
    for tok in decoded_ids:
        step = parser.feed(tok, chunk.t_start_ns)
        speech += step.visible           # words to speak, spans and protocol tokens removed
        if step.span:                    # -> DelegateSpan(step.span.instruction, step.span.opened_ns, ...)
            ...
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from edge.protocol.tokens import DELEGATE_CLOSE, DELEGATE_OPEN, TURN_EOS, TokenMap

MAX_SPAN_CHARS = 4000


@dataclass
class Span:
    """A closed delegate span: the instruction, when it opened, and what closed it."""

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
    OUTSIDE, INSIDE, VOID = "outside", "inside", "void"

    def __init__(self, tokens: TokenMap, piece: Callable[[int], bytes], max_chars: int = MAX_SPAN_CHARS) -> None:
        self.tokens = tokens
        self.piece = piece  # token id -> its bytes (a byte-level BPE piece may be a partial UTF-8 sequence)
        self.max_chars = max_chars
        self._open, self._close, self._eos = (tokens.id(DELEGATE_OPEN), tokens.id(DELEGATE_CLOSE),
                                              tokens.id(TURN_EOS))
        self.reset()

    def reset(self) -> None:
        self.state = self.OUTSIDE
        self.turn_used = False  # a span was already taken in this turn
        self.opened_ns = 0
        self.buf = bytearray()

    def feed(self, token_id: int, t_ns: int) -> Step:
        name = self.tokens.name(token_id)
        if self.state == self.OUTSIDE:
            if token_id == self._open:
                if self.turn_used:
                    self.state = self.VOID  # hide its words, but it is not run
                    return Step(voided="a second delegate span in one turn was ignored")
                self.state, self.opened_ns, self.buf = self.INSIDE, t_ns, bytearray()
                return Step()
            if token_id == self._eos:
                self.turn_used = False
            return Step(visible=b"" if name is not None else self.piece(token_id))
        if self.state == self.VOID:
            if token_id in (self._close, self._eos):
                self.state = self.OUTSIDE
                if token_id == self._eos:
                    self.turn_used = False
            return Step()
        # inside a span
        if token_id == self._open:
            self.state, self.buf = self.VOID, bytearray()
            return Step(voided="a nested <delegate> voided the span")
        if token_id in (self._close, self._eos):
            step = self._close_span(DELEGATE_CLOSE if token_id == self._close else TURN_EOS)
            if token_id == self._eos:
                self.turn_used = False
            return step
        if name is not None:
            return Step()  # other protocol tokens (e.g. a forced <|chunk_eos|>) are not instruction text
        self.buf += self.piece(token_id)
        if len(self.buf) > self.max_chars and len(self.buf.decode("utf-8", "ignore")) > self.max_chars:
            self.state, self.buf = self.VOID, bytearray()
            return Step(voided=f"the delegate span passed {self.max_chars} characters and was voided")
        return Step()

    def _close_span(self, closed_by: str) -> Step:
        text = self.buf.decode("utf-8", "replace").strip()
        self.state, self.buf = self.OUTSIDE, bytearray()
        if not text:
            return Step(voided="an empty delegate span was ignored")
        self.turn_used = True
        return Step(span=Span(text, self.opened_ns, closed_by))
