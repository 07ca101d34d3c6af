"""Sampling of the reference: repetition penalty over a window, listen scale, turn-end length penalty,
temperature, top-k, top-p; plus masks (protocol rules) and biases (test-only forcing)."""
from __future__ import annotations

import collections
import math

import numpy as np

from edge.models.venus.settings import Sampling

FORCE_BIAS = 1e4  # large and finite: +inf misbehaves with temperature


class Sampler:
    def __init__(self, settings: Sampling, listen_id: int, turn_eos_id: int) -> None:
        self.s = settings
        self.listen_id, self.turn_eos_id = listen_id, turn_eos_id
        self.rng = np.random.default_rng(settings.seed)
        self.recent: collections.deque[int] = collections.deque(maxlen=max(1, settings.repetition_window))

    def remember(self, token: int) -> None:
        self.recent.append(int(token))

    def adjust(self, logits: np.ndarray, turn_tokens: int) -> np.ndarray:
        """The reference's logit adjustments (before masks and sampling)."""
        x = logits.astype(np.float32, copy=True)
        if self.s.repetition_penalty != 1.0 and self.recent:
            ids = np.fromiter(set(self.recent), np.int64)
            v = x[ids]
            x[ids] = np.where(v > 0, v / self.s.repetition_penalty, v * self.s.repetition_penalty)
        if self.s.listen_scale != 1.0:
            x[self.listen_id] += math.log(max(self.s.listen_scale, 1e-12))
        if self.s.turn_eos_length_penalty:
            x[self.turn_eos_id] += self.s.turn_eos_length_penalty * turn_tokens
        return x

    def sample(self, logits: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None = None,
               turn_tokens: int = 0) -> int:
        x = self.adjust(logits, turn_tokens)
        for tok, b in (bias or {}).items():
            x[tok] += b
        x[masked] = -np.inf
        t = self.s.temperature
        if t <= 0:
            return int(np.argmax(x))
        k = min(max(1, self.s.top_k), len(x)) if self.s.top_k > 0 else len(x)
        top = np.argpartition(-x, k - 1)[:k] if k < len(x) else np.arange(len(x))
        top = top[np.argsort(-x[top], kind="stable")]
        z = x[top] / t
        z = z - z[0]
        p = np.exp(z)
        p /= p.sum()
        if self.s.top_p < 1.0:
            keep = int(np.searchsorted(np.cumsum(p), self.s.top_p) + 1)
            p = p[:keep] / p[:keep].sum()
            top = top[:keep]
        return int(top[self.rng.choice(len(p), p=p)])
