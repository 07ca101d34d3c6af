"""Sampling of the reference: repetition penalty over a window, listen scale, turn-end length penalty,
temperature, top-k, top-p; plus masks (protocol rules) and biases (test-only forcing).

`ChainSampler` is what the chunk loop uses: the adjustments are written into
llama.cpp's own logits buffer, then llama.cpp's sampler chain (top-k, top-p,
temperature, distribution) draws in C, as plain llama-cpp-python does.
`Sampler` is the same rules in NumPy over a copy (a reference, and for logits
that do not live in a llama.cpp context).
"""
from __future__ import annotations

import collections
import math

import numpy as np

from edge.bundle.settings import Sampling

FORCE_BIAS = 1e4  # large and finite: +inf misbehaves with temperature


class _Rules:
    def __init__(self, settings: Sampling, listen_id: int, turn_eos_id: int) -> None:
        self.s = settings
        self.listen_id, self.turn_eos_id = listen_id, turn_eos_id
        self.window: collections.deque[int] = collections.deque()
        self.counts: collections.Counter[int] = collections.Counter()
        self._ids: np.ndarray | None = None

    def remember(self, token: int) -> None:
        self.window.append(int(token))
        self.counts[int(token)] += 1
        if len(self.window) > max(1, self.s.repetition_window):
            old = self.window.popleft()
            self.counts[old] -= 1
            if not self.counts[old]:
                del self.counts[old]
        self._ids = None

    def apply(self, x: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None, turn_tokens: int) -> None:
        """Adjust logits in place: penalty, listen scale, turn-end penalty, biases, then masks."""
        s = self.s
        if s.repetition_penalty != 1.0 and self.counts:
            if self._ids is None:
                self._ids = np.fromiter(self.counts, np.int64, len(self.counts))
            v = x[self._ids]
            x[self._ids] = np.where(v > 0, v / s.repetition_penalty, v * s.repetition_penalty)
        if s.listen_scale != 1.0:
            x[self.listen_id] += math.log(max(s.listen_scale, 1e-12))
        if s.turn_eos_length_penalty:
            x[self.turn_eos_id] += s.turn_eos_length_penalty * turn_tokens
        for tok, b in (bias or {}).items():
            x[tok] += b
        if len(masked):
            x[masked] = -np.inf


class Sampler(_Rules):
    """The rules and the draw in NumPy, over a copy of the logits."""

    def __init__(self, settings: Sampling, listen_id: int, turn_eos_id: int) -> None:
        super().__init__(settings, listen_id, turn_eos_id)
        self.rng = np.random.default_rng(settings.seed)

    def sample(self, logits: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None = None,
               turn_tokens: int = 0) -> int:
        x = logits.astype(np.float32, copy=True)
        self.apply(x, masked, bias, turn_tokens)
        t = self.s.temperature
        if t <= 0:
            return int(np.argmax(x))
        k = min(self.s.top_k, len(x)) if self.s.top_k > 0 else len(x)
        top = np.argpartition(-x, k - 1)[:k] if k < len(x) else np.arange(len(x))
        top = top[np.argsort(-x[top], kind="stable")]
        p = np.exp((x[top] - x[top[0]]) / t)
        p /= p.sum()
        if self.s.top_p < 1.0:
            keep = int(np.searchsorted(np.cumsum(p), self.s.top_p) + 1)
            p, top = p[:keep] / p[:keep].sum(), top[:keep]
        return int(top[self.rng.choice(len(p), p=p)])


class ChainSampler(_Rules):
    """The rules written into llama.cpp's logits buffer, then llama.cpp's sampler chain draws."""

    def __init__(self, settings: Sampling, listen_id: int, turn_eos_id: int) -> None:
        super().__init__(settings, listen_id, turn_eos_id)
        import llama_cpp as ll

        self.ll = ll
        self.chain = ll.llama_sampler_chain_init(ll.llama_sampler_chain_default_params())
        parts = []
        if settings.temperature <= 0:
            parts.append(ll.llama_sampler_init_greedy())
        else:
            if settings.top_k > 0:
                parts.append(ll.llama_sampler_init_top_k(settings.top_k))
            if settings.top_p < 1.0:
                parts.append(ll.llama_sampler_init_top_p(settings.top_p, 1))
            parts.append(ll.llama_sampler_init_temp(settings.temperature))
            parts.append(ll.llama_sampler_init_dist(settings.seed & 0xFFFFFFFF))
        for p in parts:
            ll.llama_sampler_chain_add(self.chain, p)

    def sample(self, ctx, logits: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None = None,
               turn_tokens: int = 0) -> int:
        """`logits` must be the view of the context's last output row (LlamaModel.logits(copy=False))."""
        self.apply(logits, masked, bias, turn_tokens)
        return int(self.ll.llama_sampler_sample(self.chain, ctx, -1))

    def close(self) -> None:
        if getattr(self, "chain", None):
            self.ll.llama_sampler_free(self.chain)
            self.chain = None
