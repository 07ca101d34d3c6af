"""A scripted frontend: says given words at given chunks. Serves tests and graph benchmarks.

Script file, one action per line (`#` starts a comment):

    # chunk  action    text
    2        speak     Hello there, I am listening.
    4        delegate  What is the weather in Paris right now?
    5        talk
    6        hear      What time is it?
    7        interrupt
    8        listen

`speak` text is spoken in that chunk (and ends the turn); `delegate` emits a
span for the harness; `interrupt` yields the floor; `talk` is the user
speaking through the chunk, and `hear` the user's turn ending in it with
these words (a new question: no harness result is spoken in either).
Unlisted chunks listen. Live, the words a chunk speaks are known before its
boundary: they go to the voice as soon as that chunk's audio starts to arrive.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.frontend.base import Ahead, Chunk, ChunkOutput, DelegateSpan, Frontend, OverlapJudge, ResultToSay

ACTIONS = ("speak", "delegate", "interrupt", "listen", "talk", "hear")


class ScriptError(ValueError):
    pass


@dataclass
class Action:
    chunk: int
    action: str
    text: str


def parse_script(text: str, source: str = "script") -> list[Action]:
    actions = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].isdigit():
            raise ScriptError(f"{source}:{n}: expected '<chunk> <action> [text]', got {raw.strip()!r}")
        chunk, action, rest = int(parts[0]), parts[1], parts[2] if len(parts) > 2 else ""
        if action not in ACTIONS:
            raise ScriptError(f"{source}:{n}: unknown action {action!r}; use one of {', '.join(ACTIONS)}")
        if action in ("speak", "delegate", "hear") and not rest:
            raise ScriptError(f"{source}:{n}: {action} needs text")
        actions.append(Action(chunk, action, rest))
    return actions


class ScriptedFrontend(Frontend):
    name = "scripted"

    def __init__(self, actions: list[Action], speak_backend: bool = True) -> None:
        self.by_chunk: dict[int, list[Action]] = {}
        for a in actions:
            self.by_chunk.setdefault(a.chunk, []).append(a)
        self.pending: list[ResultToSay] = []
        self.speak_backend = speak_backend
        self.told_ahead = -1  # the last chunk whose words went to the voice before its boundary

    @classmethod
    def from_file(cls, path: str | Path) -> "ScriptedFrontend":
        p = Path(path)
        if not p.is_file():
            raise ScriptError(f"script {p} does not exist")
        return cls(parse_script(p.read_text(), str(p)))

    def step(self, chunk: Chunk) -> ChunkOutput:
        out = ChunkOutput(control="listen")
        for a in self.by_chunk.get(chunk.index, []):
            if a.action == "speak":
                out.control, out.text, out.turn_end = "speak", (out.text + " " + a.text).strip(), True
            elif a.action == "delegate":
                out.delegates.append(DelegateSpan(a.text, chunk.t_end_ns))  # heard through the chunk
            elif a.action == "interrupt":
                out.interrupt = True
            elif a.action == "hear":  # the user's turn ends in this chunk
                out.user_text, out.info["user_end_ns"] = a.text, chunk.t_end_ns
        users = any(a.action in ("talk", "hear") for a in self.by_chunk.get(chunk.index, []))
        if out.control == "listen" and not out.interrupt and not users and self.pending and self.speak_backend:
            result = self.pending.pop(0)  # an idle listen boundary: speak the result now
            out.control, out.text, out.turn_end = "speak", result.text, True
            out.backend_id = result.id
        return out

    def hear_ahead(self, so_far: Chunk) -> Ahead | None:
        """The words this chunk speaks are known in advance: handed to the voice once, at its first audio."""
        words = " ".join(a.text for a in self.by_chunk.get(so_far.index, []) if a.action == "speak")
        if not words or so_far.index == self.told_ahead:
            return None
        self.told_ahead = so_far.index
        heard = " ".join(a.text for a in self.by_chunk.get(so_far.index, []) if a.action == "hear")
        return Ahead(words, heard)

    def deliver(self, result: ResultToSay) -> None:
        if all(r.id != result.id for r in self.pending):
            self.pending.append(result)

    def result_ahead(self, result: ResultToSay) -> str:
        """A result first in line is said at the next idle boundary, in its own words."""
        first = self.pending[0] if self.pending and self.speak_backend else None
        return result.text if first is not None and first.id == result.id else ""

    def withdraw(self, result_id: str) -> bool:
        kept = [r for r in self.pending if r.id != result_id]
        dropped, self.pending = len(kept) < len(self.pending), kept
        return dropped

    def checkpoint(self) -> dict[str, Any]:
        """Results waiting for an idle boundary: a restart still speaks them."""
        return {"pending": [[r.id, r.text, r.work_id] for r in self.pending]}

    def resume(self, folder: Path, state: dict[str, Any]) -> dict[str, Any]:
        self.pending = [ResultToSay(rid, text, work_id) for rid, text, work_id in state.get("pending", [])]
        return {"pending": len(self.pending)} if self.pending else {}

    def hear_overlaps(self, judge: OverlapJudge) -> bool:
        return False  # it hears nothing: the judge decides from capture's activity

    def yield_turn(self) -> None:
        """Nothing to drop: a scripted turn is spoken whole in its one chunk (the interrupt stops its playback)."""


class NullFrontend(Frontend):
    """Always listens: measures what the graph itself costs."""

    name = "null"

    def step(self, chunk: Chunk) -> ChunkOutput:
        return ChunkOutput(control="listen")

    def deliver(self, result: ResultToSay) -> None:
        pass

    def withdraw(self, result_id: str) -> bool:
        return False  # it holds no results

    def hear_overlaps(self, judge: OverlapJudge) -> bool:
        return False

    def yield_turn(self) -> None:
        pass  # it never speaks
