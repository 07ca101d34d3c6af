"""Retrieval from the archive: rank entries for a question, then discount near repeats.

Two scorers, one selection:
- `text_scores` (the embedded default): the question's words against each entry's scene
  description, rarer words weighing more; a time in the question ("at minute 12", "12:30",
  "ten minutes ago") adds closeness in time.
- `maxsim_scores` (an Omni bundle): late interaction between the question's tokens and each
  frame's vision tokens, sum over query tokens of the best cosine in the frame; each query
  token weighs by the median absolute deviation of its scores over the frames, so tokens that
  match every frame alike say little.
- `select`: greedy picks by relevance minus `novelty` times the similarity to the closest
  higher-ranked pick, so five kept frames of one static scene do not fill the top five.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from edge.memory.archive import Entry

STOP = frozenset("a an and at did do does i in is it me of on or the this that to was were what which who you "
                 "your when where word words screen shown show see saw seen there written say said how "
                 "minute minutes second seconds ago hour hours into".split())
LABELS = frozenset({"text", "people", "faces", "hands"})  # the description's field names, shared by all
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                      "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def query_time(query: str, now: float) -> float | None:
    """The session time a question points at, in seconds, or None when it names no time."""
    q = query.lower()
    for w, n in NUMBERS.items():
        q = re.sub(rf"\b{w}\b", str(n), q)
    if m := re.search(r"\b(\d+):(\d{2})(?::(\d{2}))?\b", q):
        a, b, c = int(m[1]), int(m[2]), m[3]
        return a * 3600 + b * 60 + int(c) if c is not None else a * 60 + b
    if m := re.search(r"\b(\d+(?:\.\d+)?)\s*(hour|minute|second)s?\s+ago\b", q):
        return now - float(m[1]) * {"hour": 3600, "minute": 60, "second": 1}[m[2]]
    if m := re.search(r"\bminute\s+(\d+(?:\.\d+)?)\b", q) or re.search(r"\b(\d+(?:\.\d+)?)\s*minutes?\s+in", q):
        return float(m[1]) * 60
    return None


def text_scores(query: str, entries: Sequence[Entry], now: float, time_scale_s: float = 45.0) -> np.ndarray:
    """Relevance in [0, 2] per entry: word match (idf-weighted, 0..1) plus closeness to a named time (0..1)."""
    n = len(entries)
    docs = [set(words(e.description)) for e in entries]
    q = [w for w in dict.fromkeys(words(query)) if w not in STOP and not w.isdigit()]
    out = np.zeros(n)
    if q and n:
        idf = {w: math.log(1 + n / (1 + sum(w in d for d in docs))) for w in q}
        total = sum(idf.values())
        out += np.array([sum(idf[w] for w in q if w in d) / total for d in docs])
    t = query_time(query, now)
    if t is not None and n:
        out += np.exp(-np.abs(np.array([e.t for e in entries]) - t) / time_scale_s)
    return out


def maxsim_scores(query_tokens: np.ndarray, frame_tokens: Sequence[np.ndarray]) -> np.ndarray:
    """Late-interaction relevance of each frame: MAD-weighted sum over query tokens of the best cosine."""
    q = _unit(np.asarray(query_tokens, np.float32))
    best = np.stack([(q @ _unit(np.asarray(f, np.float32)).T).max(axis=1) for f in frame_tokens])  # frames x query
    mad = np.median(np.abs(best - np.median(best, axis=0)), axis=0)
    weights = mad / mad.sum() if mad.sum() > 0 else np.full(q.shape[0], 1 / q.shape[0])
    return best @ weights


def token_similarity(frame_tokens: Sequence[np.ndarray]) -> Callable[[int, int], float]:
    """Frame-to-frame similarity for the novelty penalty: cosine of the mean token."""
    pooled = _unit(np.stack([_unit(np.asarray(f, np.float32)).mean(axis=0) for f in frame_tokens]))
    return lambda i, j: float(pooled[i] @ pooled[j])


def description_similarity(entries: Sequence[Entry]) -> Callable[[int, int], float]:
    """Jaccard overlap of description words; two empty descriptions count as the same scene."""
    sets = [frozenset(words(e.description)) - LABELS for e in entries]

    def sim(i: int, j: int) -> float:
        union = sets[i] | sets[j]
        return len(sets[i] & sets[j]) / len(union) if union else 1.0
    return sim


@dataclass(frozen=True)
class Pick:
    entry: Entry
    relevance: float
    score: float    # relevance after the novelty penalty, when it was picked


def select(entries: Sequence[Entry], relevance: np.ndarray, similarity: Callable[[int, int], float], k: int = 5,
           novelty: float = 1.0, pool: int = 128) -> list[Pick]:
    """Up to k entries, best first: relevance minus novelty x similarity to the closest earlier pick."""
    order = list(np.argsort(-relevance, kind="stable")[:pool])
    picks: list[int] = []
    scores: list[float] = []
    while order and len(picks) < k:
        penal = [relevance[i] - (novelty * max(similarity(i, j) for j in picks) if picks else 0.0) for i in order]
        best = int(np.argmax(penal))
        picks.append(order.pop(best))
        scores.append(float(penal[best]))
    return [Pick(entries[i], float(relevance[i]), sc) for i, sc in zip(picks, scores)]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-8)
