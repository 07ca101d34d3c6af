"""The reference duplex decoder's draw, derived again in NumPy from its published description (docs/reference.md,
"Decoding"; the released sampler's ordering), to check the chunk loop's sampler against.

Deliberately written apart from edge/backends/duplex_sampler.py: full sorts instead of partitions, a softmax over
the whole vocabulary, the histories kept as plain lists the way the reference keeps them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class ReferenceDecoder:
    listen: int
    turn_eos: int
    chunk_eos: int
    special: set[int]
    forbidden: list[int]  # the decoder's list; <|chunk_eos|> is on it too, as the reference appends it
    temperature: float = 0.7
    top_k: int = 20
    top_p: float = 0.8
    repetition_penalty: float = 1.05
    window: int = 512
    length_penalty: float = 1.0
    listen_scale: float = 1.0
    listen_top_k: int | None = None
    generated: list[int] = field(default_factory=list)  # text tokens drawn
    generated_special: list[int] = field(default_factory=list)

    @staticmethod
    def softmax(x: np.ndarray) -> np.ndarray:
        m = np.max(x)
        e = np.exp(x - m)
        return e / e.sum()

    def _adjust(self, logits: np.ndarray, extra_forbidden: list[int]) -> np.ndarray:
        x = logits.astype(np.float64).copy()
        for t in [*self.forbidden, self.chunk_eos, *extra_forbidden]:
            x[t] = -np.inf
        if self.repetition_penalty != 1.0 and self.generated:
            for t in set(self.generated[-self.window:]):
                if self.repetition_penalty > 1.0:
                    x[t] = x[t] / self.repetition_penalty
                else:
                    x[t] = x[t] * (1.0 / self.repetition_penalty)
        if self.length_penalty != 1.0:
            x[self.turn_eos] = x[self.turn_eos] / self.length_penalty if x[self.turn_eos] > 0 \
                else x[self.turn_eos] * self.length_penalty
        if self.listen_scale != 1.0:
            x[self.listen] = x[self.listen] * self.listen_scale
        return x

    def _shortcut(self, x: np.ndarray) -> bool:
        # The protocol's masked listen (a turn is open) is never chosen outright.
        return self.listen_top_k is not None and np.isfinite(x[self.listen]) and \
            int((x > x[self.listen]).sum()) < self.listen_top_k

    def distribution(self, logits: np.ndarray, extra_forbidden: list[int] = ()) -> np.ndarray:
        n = len(logits)
        raw = logits.astype(np.float64)
        if self.temperature <= 0:
            first = float(int(np.argmax(raw)) == self.chunk_eos)
        else:
            first = float(self.softmax(raw)[self.chunk_eos])
        x = self._adjust(logits, list(extra_forbidden))
        second = np.zeros(n)
        if self._shortcut(x):
            second[self.listen] = 1.0
        elif self.temperature <= 0:
            second[int(np.argmax(x))] = 1.0
        else:
            y = x / self.temperature
            if self.top_k > 0:
                kth = np.sort(y)[::-1][min(self.top_k, n) - 1]
                y = np.where(y < kth, -np.inf, y)
            if self.top_p > 0.0:
                order = np.argsort(-y, kind="stable")
                cum = np.cumsum(self.softmax(y[order]))
                remove = np.concatenate([[False], cum[:-1] > self.top_p])
                y[order[remove]] = -np.inf
            second = self.softmax(y)
        out = (1.0 - first) * second
        out[self.chunk_eos] += first
        return out

    def took(self, token: int, logits: np.ndarray, extra_forbidden: list[int] = ()) -> None:
        """What the reference records after a draw gave `token`: the chunk end (only the first draw gives it)
        and a listen chosen outright enter no history; otherwise the token's kind picks its history."""
        if token == self.chunk_eos or (token == self.listen and self._shortcut(self._adjust(logits,
                                                                                             list(extra_forbidden)))):
            return
        (self.generated_special if token in self.special else self.generated).append(token)
