"""The memory capability: answers from the long-video archive the vision node keeps ("what was on the whiteboard?").

The archive's folder is read afresh for every question (the vision node keeps appending to it). With the
embedded default it is ranked by a text match over the scene descriptions (edge/memory/retrieve.py) and the
best pick's description answers. With an Omni bundle the frames were stored with the bundle's vision tokens:
they are ranked by MaxSim of the question's token embeddings on those tokens, and the bundle's model answers
after the picked frames and their audio (a `FrameReader`, edge/frontend/venus/memory.py), as the reference's
memory chat puts retrieved frames in front of its model.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Protocol

import numpy as np

from edge.harness.capability import CapabilityError, Outcome, RunContext, one_text
from edge.memory.answer import answer, clock
from edge.memory.archive import Archive
from edge.memory.describe import fields
from edge.memory.retrieve import (Pick, description_similarity, maxsim_scores, select, text_scores,
                                  token_similarity)
from edge.memory.settings import MemorySettings


class FrameReader(Protocol):
    """A model that reads stored frames: a question's token rows, and its answer after (tokens, audio) pairs."""

    def query(self, text: str) -> np.ndarray: ...

    def answer(self, question: str, frames: list[tuple[np.ndarray, np.ndarray]]) -> str: ...


class MemoryCapability:
    name = "memory"
    description = "Recalls what the camera saw earlier: text on signs, screens, whiteboards, and when."
    instructions = ("Use when the user asks what was shown, written or seen earlier ('what was on the whiteboard', "
                    "'what did the sign say ten minutes ago'). Put the question in 'question'.")
    schema: dict[str, Any] = one_text("question", 1000)
    timeout_s = 10.0  # its default: the harness's `timeouts` setting may give another (HarnessSettings.timeout_for)

    def __init__(self, root: str | Path, timeout_s: float | None = None, k: int = 5,
                 reader: Callable[[], FrameReader] | None = None) -> None:
        """`reader` opens the model that reads frames stored with vision tokens (once, on the first question)."""
        self.root = Path(root)
        if timeout_s is not None:
            self.timeout_s = timeout_s
        self.k = k
        self.open_reader = reader
        self.reader: FrameReader | None = None

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        if not (self.root / "index.jsonl").exists():
            return Outcome(answer(arguments["question"], []))
        try:
            archive = Archive(MemorySettings(root=self.root))
        except ValueError as exc:
            raise CapabilityError(f"my memory cannot be read: {exc}") from None
        entries = archive.entries()
        if not entries:
            return Outcome(answer(arguments["question"], []))
        question = arguments["question"]
        if self.open_reader is not None and all(e.tokens for e in entries):
            return Outcome(self._read(question, archive, entries))
        relevance = text_scores(question, entries, now=entries[-1].t)
        picks = [p for p in select(entries, relevance, description_similarity(entries), self.k) if p.relevance > 0]
        if not picks:  # no word of the question was seen ("what was on the whiteboard?"): the newest text read
            picks = [Pick(e, 0.0, 0.0) for e in reversed(entries) if fields(e.description).get("text")][:1]
        return Outcome(answer(question, picks))

    def _read(self, question: str, archive: Archive, entries: list) -> str:
        """The bundle's answer after the frames whose vision tokens best match the question, in time order."""
        if self.reader is None:
            assert self.open_reader is not None
            self.reader = self.open_reader()
        try:
            asked = self.reader.query(question)
        except ValueError as exc:
            raise CapabilityError(str(exc)) from None
        tokens = [archive.tokens(e) for e in entries]
        picks = select(entries, maxsim_scores(asked, tokens), token_similarity(tokens), self.k)
        by_time = sorted(picks, key=lambda p: p.entry.t)
        said = self.reader.answer(question, [(archive.tokens(p.entry), archive.audio(p.entry)) for p in by_time])
        when = ", ".join(clock(p.entry.t) for p in by_time)
        return said or f"I looked at what I saw at {when} and found no words for it."
