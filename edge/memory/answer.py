"""The embedded default's answer from retrieved memory: what the best pick's description says, and when."""
from __future__ import annotations

from edge.memory.describe import in_words
from edge.memory.retrieve import Pick


def clock(t: float) -> str:
    t = max(0, int(round(t)))
    return f"{t // 3600}:{t % 3600 // 60:02d}:{t % 60:02d}" if t >= 3600 else f"{t // 60}:{t % 60:02d}"


def answer(question: str, picks: list[Pick]) -> str:
    """A one-sentence answer grounded in the picks (best first); says so when memory holds nothing."""
    described = [p for p in picks if in_words(p.entry.description)]
    if not described:
        return "I have nothing in memory that matches that." if picks else "My memory is empty."
    best = described[0].entry
    return f"At {clock(best.t)} I saw {in_words(best.description)}."
