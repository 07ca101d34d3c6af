"""The memory capability: answers from the long-video archive the vision node keeps ("what was on the whiteboard?").

The archive's folder is read afresh for every question (the vision node keeps appending to it), ranked
by a text match over the scene descriptions (edge/memory/retrieve.py), and the best pick answers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from edge.harness.capability import CapabilityError, Outcome, RunContext
from edge.memory.answer import answer
from edge.memory.archive import Archive
from edge.memory.describe import fields
from edge.memory.retrieve import Pick, description_similarity, select, text_scores
from edge.memory.settings import MemorySettings


class MemoryCapability:
    name = "memory"
    description = "Recalls what the camera saw earlier: text on signs, screens, whiteboards, and when."
    instructions = ("Use when the user asks what was shown, written or seen earlier ('what was on the whiteboard', "
                    "'what did the sign say ten minutes ago'). Put the question in 'question'.")
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 1000}},
        "required": ["question"],
        "additionalProperties": False,
    }

    def __init__(self, root: str | Path, timeout_s: float = 10.0, k: int = 5) -> None:
        self.root = Path(root)
        self.timeout_s = timeout_s
        self.k = k

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
        relevance = text_scores(question, entries, now=entries[-1].t)
        picks = [p for p in select(entries, relevance, description_similarity(entries), self.k) if p.relevance > 0]
        if not picks:  # no word of the question was seen ("what was on the whiteboard?"): the newest text read
            picks = [Pick(e, 0.0, 0.0) for e in reversed(entries) if fields(e.description).get("text")][:1]
        return Outcome(answer(question, picks))
