"""Sampling rules: the reference duplex decoder's (docs/reference.md, "Decoding") for the chunk loop, and a
plain NumPy sampler for the TTS codes; plus masks (protocol rules) and biases (test-only forcing).

`ChainSampler` is what the chunk loop uses, in the reference's order: an independent draw of
`<|chunk_eos|>` from the untouched distribution; then masks, the repetition penalty (each distinct
recent token's logit divided by the penalty, whatever its sign), the length penalty on `<|turn_eos|>`,
the listen scale (the `<|listen|>` logit multiplied), the listen top-k shortcut; then llama.cpp's
own sampler chain (top-k, top-p, temperature, distribution) draws in C from its logits buffer, where
the adjustments were written.
`Sampler` draws in NumPy over a copy, with the sign-aware repetition penalty of the reference's TTS.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

FORCE_BIAS = 1e4  # large and finite: +inf misbehaves with temperature


@dataclass
class Sampling:
    # The first five are positional in a few places (the TTS code sampler): keep their order.
    temperature: float = 0.7  # 0 or below: greedy
    top_k: int = 20
    top_p: float = 0.8
    repetition_penalty: float = 1.05
    repetition_window: int = 512
    listen_scale: float = 1.0  # multiplies the <|listen|> logit (the reference's listen_prob_scale)
    length_penalty: float = 1.0  # on the <|turn_eos|> logit only: divides it when positive, multiplies it otherwise
    listen_top_k: int | None = None  # listen is chosen outright when fewer than this many tokens outrank it
    seed: int = 0


class _Rules:
    sign_blind = False  # the duplex decoder divides a repeated token's logit by the penalty even when negative

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

    def apply(self, x: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None,
              allow: np.ndarray | None = None) -> None:
        """Adjust logits in place: repetition, length penalty, listen scale, biases, then masks."""
        s = self.s
        if s.repetition_penalty != 1.0 and self.counts:
            if self._ids is None:
                self._ids = np.fromiter(self.counts, np.int64, len(self.counts))
            v = x[self._ids]
            if self.sign_blind:
                x[self._ids] = v / s.repetition_penalty
            else:
                x[self._ids] = np.where(v > 0, v / s.repetition_penalty, v * s.repetition_penalty)
        if s.length_penalty != 1.0:
            v = x[self.turn_eos_id]
            x[self.turn_eos_id] = v / s.length_penalty if v > 0 else v * s.length_penalty
        if s.listen_scale != 1.0:
            x[self.listen_id] *= s.listen_scale
        for tok, b in (bias or {}).items():
            x[tok] += b
        if len(masked):
            x[masked] = -np.inf
        if allow is not None:  # only these may follow (e.g. a chunk terminator after <|turn_eos|>)
            keep = x[allow].copy()
            x[:] = -np.inf
            x[allow] = keep

    def listen_outright(self, x: np.ndarray) -> bool:
        """The reference's listen top-k: listen wins when fewer than k tokens outrank it."""
        k = self.s.listen_top_k
        return k is not None and np.isfinite(x[self.listen_id]) and int(np.sum(x > x[self.listen_id])) < k


class Sampler(_Rules):
    """The rules and the draw in NumPy, over a copy of the logits."""

    def __init__(self, settings: Sampling, listen_id: int, turn_eos_id: int) -> None:
        super().__init__(settings, listen_id, turn_eos_id)
        self.rng = np.random.default_rng(settings.seed)

    def sample(self, logits: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None = None,
               allow: np.ndarray | None = None) -> int:
        x = logits.astype(np.float32, copy=True)
        self.apply(x, masked, bias, allow)
        if self.listen_outright(x):
            return self.listen_id
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
    """The duplex decoder: the chunk-end draw first, then the rules written into llama.cpp's logits buffer,
    then llama.cpp's sampler chain draws. Only tokens of that second draw enter the repetition window."""

    sign_blind = True

    def __init__(self, settings: Sampling, listen_id: int, turn_eos_id: int, chunk_eos_id: int | None = None) -> None:
        super().__init__(settings, listen_id, turn_eos_id)
        import llama_cpp as ll

        self.ll = ll
        self.chunk_eos_id = chunk_eos_id
        self.rng = np.random.default_rng(settings.seed)
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

    def chunk_ends(self, x: np.ndarray) -> bool:
        """The independent draw: would the untouched distribution (temperature 1) pick `<|chunk_eos|>`?"""
        if self.chunk_eos_id is None:
            return False
        if self.s.temperature <= 0:
            return int(np.argmax(x)) == self.chunk_eos_id
        top = float(x.max())
        p = np.exp(float(x[self.chunk_eos_id]) - top) / float(np.exp(x - top).sum())
        return bool(self.rng.random() < p)  # the same chance as a full categorical draw landing on it

    def sample(self, ctx, logits: np.ndarray, masked: np.ndarray, bias: dict[int, float] | None = None,
               allow: np.ndarray | None = None) -> int:
        """`logits` must be the view of the context's last output row (LlamaModel.logits(copy=False)).

        With a bias (forcing) the chunk-end draw is skipped: what is forced is what comes next."""
        if not bias and self.chunk_ends(logits):
            return int(self.chunk_eos_id)  # type: ignore[arg-type]
        self.apply(logits, masked, bias, allow)
        if not bias and self.listen_outright(logits):
            return self.listen_id
        tok = int(self.ll.llama_sampler_sample(self.chain, ctx, -1))
        self.remember(tok)
        return tok

    def close(self) -> None:
        if getattr(self, "chain", None):
            self.ll.llama_sampler_free(self.chain)
            self.chain = None
