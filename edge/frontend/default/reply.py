"""One reply of the decision LLM, pulled a sentence at a time across chunk boundaries.

The constrained text is parsed as it grows: a delegate span is handed out
once it closes (it is never spoken), spoken text is handed out whole
sentence by whole sentence, and a listen ends the turn silently.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from edge.frontend.default import grammar as protocol
from edge.frontend.default.llm import TokenStream

_CLAUSE_END = re.compile(r"[,;:](?=\s)")
_WORD_END = re.compile(r"\S(?=\s+\S)")  # a word followed by the next one begun: it is whole
MIN_FIRST_WORDS = 3  # the first piece may end at a comma, so speech starts sooner
# Live, the first piece may also end after this many whole words and characters, without waiting for the end of
# its sentence: the voice starts on them while the rest is decoded (said at the next boundary).
FIRST_WORDS, FIRST_CHARS = 4, 18
# Said as soon as a reply opens a delegate span: the user hears at once that the question was taken up, while
# the span and the model's own words after it are still being decoded (they follow as before).
ACKNOWLEDGEMENT = "Okay."


@dataclass
class ReplyPiece:
    text: str = ""
    instruction: str | None = None
    closed_by: str = protocol.CLOSE
    finished: bool = False
    listen: bool = False
    tokens: list[int] = field(default_factory=list)
    llm_s: float = 0.0
    start: int = 0  # where its words begin in the reply's speech


class FixedStream:
    """A reply decided by rule, not decoded: it reads like a finished TokenStream holding `text`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.finished = True
        self.tokens: list[int] = []

    def next(self) -> str:
        return ""

    def close(self) -> None:
        pass


class Reply:
    def __init__(self, stream: TokenStream | FixedStream, first_words: bool = False) -> None:
        self.stream = stream
        self.spoken_upto = 0  # characters of speech already handed out
        self.delegated = False
        self.token_upto = 0
        self.held: ReplyPiece | None = None  # a piece decoded ahead (a draft), handed out by the next call
        # The acknowledgement was said for the span being written. The conversation keeps the model's own text
        # only: with the acknowledgement in it, the model learns to write it after its spans too ("Okay. Okay.").
        self.acknowledged = False
        self.first_words = first_words  # live: the first piece may be its first few words (FIRST_WORDS)
        self.cut_short = False  # the last piece was the first few words: the rest of that sentence is next

    def hold(self, piece: ReplyPiece) -> None:
        """Keep a piece decoded before its boundary: the next `next_piece` returns it, at no further cost."""
        self.held = piece

    @property
    def opening(self) -> bool:
        """Its first sentence is not handed out whole yet: the user is still waiting for it (or its end)."""
        return self.spoken_upto == 0 or self.cut_short

    @property
    def said_upto(self) -> int:
        """Characters of speech handed out to be said: a piece held for its boundary is not said yet."""
        return self.held.start if self.held is not None and self.held.text else self.spoken_upto

    @property
    def finished(self) -> bool:
        return self.stream.finished and self.spoken_upto >= len(self._parse().speech)

    def _parse(self) -> protocol.Parsed:
        return protocol.parse(self.stream.text, self.stream.finished)

    def _cut(self, speech: str, first: bool) -> int | None:
        end = protocol.sentence_end(speech, self.spoken_upto, self.stream.finished)
        if first and end is None:
            m = _CLAUSE_END.search(speech, self.spoken_upto)
            if m and len(speech[self.spoken_upto:m.end()].split()) >= MIN_FIRST_WORDS:
                return m.end()
            if self.first_words and not self.acknowledged:  # not a holding phrase: nobody waits for it
                end = self._first_words(speech)
                self.cut_short = end is not None
        return end

    def _first_words(self, speech: str) -> int | None:
        """The end of the first few whole words of the reply (enough of them to be worth saying alone)."""
        for n, m in enumerate(_WORD_END.finditer(speech, self.spoken_upto), 1):
            if n >= FIRST_WORDS and len(speech[self.spoken_upto:m.end()].strip()) >= FIRST_CHARS:
                return m.end()
        return None

    def next_piece(self, max_tokens: int, budget_s: float | None = None) -> ReplyPiece:
        """Decode until the next sentence (or the span, or the end) is whole.

        At most `max_tokens` more, and no longer than `budget_s`: a live chunk loop must not fall behind
        the microphone; what is unfinished continues at the next boundary.
        """
        ahead, self.held = self.held, None
        if ahead is not None and (ahead.text or ahead.instruction is not None or ahead.finished):
            ahead.llm_s = 0.0  # spent when it was decoded
            return ahead
        t0 = time.perf_counter()
        piece = ReplyPiece(start=self.spoken_upto)
        first = self.spoken_upto == 0
        self.cut_short = False
        budget = max_tokens
        while True:
            parsed = self._parse()
            if parsed.instruction is not None and not self.delegated:
                self.delegated = True
                piece.instruction, piece.closed_by = parsed.instruction, parsed.closed_by
            if first and parsed.undecided and not self.acknowledged and self.stream.text.startswith(protocol.OPEN):
                self.acknowledged = True
                piece.text = ACKNOWLEDGEMENT
                break
            if parsed.listen:
                piece.listen = piece.finished = True
                break
            end = None if parsed.undecided else self._cut(parsed.speech, first)
            if end is not None and end > self.spoken_upto:
                piece.text = parsed.speech[self.spoken_upto:end].strip()
                self.spoken_upto = end
                break
            if self.stream.finished or budget <= 0:
                break
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                break
            self.stream.next()
            budget -= 1
        piece.finished = piece.finished or self.finished
        piece.tokens = (ahead.tokens if ahead is not None else []) + self.stream.tokens[self.token_upto:]
        self.token_upto = len(self.stream.tokens)
        piece.llm_s = time.perf_counter() - t0
        return piece

    def close(self) -> None:
        self.stream.close()
