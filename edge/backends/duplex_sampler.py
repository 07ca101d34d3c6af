"""The chunk loop's sampler: the reference duplex decoder's draw (docs/reference.md, "Decoding"), in NumPy.

One draw, in the reference's order:
1. an independent draw from the untouched distribution (temperature 1, nothing masked): when it lands on
   `<|chunk_eos|>` the chunk ends there;
2. otherwise the forbidden ids are masked (the vocabulary's unusable ids, `<|tts_pad|>`, and `<|chunk_eos|>`
   itself, which only the first draw may give), with the protocol's own masks;
3. the repetition penalty: each distinct token of the last `repetition_window` *text* tokens drawn has its
   logit divided by the penalty, whatever its sign (drawn control tokens keep a history of their own that no
   penalty reads);
4. the length penalty on `<|turn_eos|>` (divided when positive, multiplied otherwise);
5. the `<|listen|>` logit multiplied by the listen scale;
6. with `listen_top_k` set, listen is chosen outright when fewer than k tokens outrank it;
7. the logits divided by the temperature, then top-k (every token at least as likely as the k-th stays)
   and top-p (the most likely tokens up to and including the first that takes the running sum over top_p),
   then a categorical draw. Temperature 0 or below: argmax in both draws.

`parts` gives the distribution of a draw; `sample` draws from exactly those parts, so what the loop draws
from is what `distribution` reports.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

from edge.backends.sampling import Sampling


@dataclass(frozen=True)
class DuplexIds:
    listen: int
    turn_eos: int
    chunk_eos: int
    special: frozenset[int] = frozenset()  # control tokens: drawn, they go to their own history
    forbidden: tuple[int, ...] = ()  # masked in the second draw, whatever the protocol's state


@dataclass
class Parts:
    """A draw's distribution: the chance the first draw ends the chunk, then the second draw's candidates."""

    chunk_end: float
    ids: np.ndarray
    probs: np.ndarray  # over ids, summing to 1


class DuplexSampler:
    def __init__(self, settings: Sampling, ids: DuplexIds) -> None:
        self.s, self.ids = settings, ids
        self.rng = np.random.default_rng(settings.seed)
        self.window: collections.deque[int] = collections.deque()  # the text tokens the penalty reads
        self.counts: collections.Counter[int] = collections.Counter()
        self.special_history: collections.deque[int] = collections.deque(maxlen=4096)  # never read by a penalty
        self.forbidden = np.array(sorted({*ids.forbidden, ids.chunk_eos}), np.int64)

    # --- histories -------------------------------------------------------------------------------
    def remember(self, token: int) -> None:
        token = int(token)
        if token in self.ids.special:
            self.special_history.append(token)
            return
        self.window.append(token)
        self.counts[token] += 1
        if len(self.window) > max(1, self.s.repetition_window):
            old = self.window.popleft()
            self.counts[old] -= 1
            if not self.counts[old]:
                del self.counts[old]

    # --- the distribution ------------------------------------------------------------------------
    def _chunk_end(self, logits: np.ndarray) -> float:
        x = np.asarray(logits, np.float64)
        if self.s.temperature <= 0:
            return float(int(np.argmax(x)) == self.ids.chunk_eos)
        top = x.max()
        return float(np.exp(x[self.ids.chunk_eos] - top) / np.exp(x - top).sum())

    def _first(self, logits: np.ndarray, bias: dict[int, float] | None) -> float:
        """The first draw's chance of the chunk end; forcing decides it (a forced chunk end is this draw's)."""
        if bias:
            return 1.0 if self.ids.chunk_eos in bias else 0.0
        return self._chunk_end(logits)

    def adjusted(self, logits: np.ndarray, mask: np.ndarray | None = None, bias: dict[int, float] | None = None,
                 allow: np.ndarray | None = None) -> np.ndarray:
        """Steps 2-5 on a float64 copy; `allow`: only these may be drawn (the protocol after `<|turn_eos|>`)."""
        s, ids = self.s, self.ids
        x = np.array(logits, np.float64)
        x[self.forbidden] = -np.inf
        if mask is not None and len(mask):
            x[mask] = -np.inf
        if allow is not None:
            keep = x[allow].copy()
            x[:] = -np.inf
            x[allow] = keep
        if s.repetition_penalty != 1.0 and self.counts:
            rep = np.fromiter(self.counts, np.int64, len(self.counts))
            rep = rep[rep < len(x)]
            x[rep] = x[rep] / s.repetition_penalty
        if s.length_penalty != 1.0:
            v = x[ids.turn_eos]
            x[ids.turn_eos] = v / s.length_penalty if v > 0 else v * s.length_penalty
        if s.listen_scale != 1.0:
            x[ids.listen] *= s.listen_scale
        for tok, b in (bias or {}).items():  # test-only forcing, on top of the rules
            if np.isfinite(x[tok]):
                x[tok] += b
        return x

    def _listen_outright(self, x: np.ndarray) -> bool:
        k = self.s.listen_top_k
        return k is not None and bool(np.isfinite(x[self.ids.listen])) and int(np.sum(x > x[self.ids.listen])) < k

    def _second(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """Steps 6-7 over the adjusted logits: the candidates, their probabilities, and whether listen was
        chosen outright (then nothing enters a history, as in the reference)."""
        s = self.s
        if self._listen_outright(x):
            return np.array([self.ids.listen]), np.ones(1), True
        if s.temperature <= 0 or not np.isfinite(x).any():
            return np.array([int(np.argmax(x))]), np.ones(1), False
        x = x / s.temperature
        n = len(x)
        if 0 < s.top_k < n:
            kth = np.partition(x, n - s.top_k)[n - s.top_k]
            cand = np.flatnonzero(x >= kth)  # ties with the k-th stay, as a comparison filter keeps them
        else:
            cand = np.flatnonzero(np.isfinite(x))
        cand = cand[np.isfinite(x[cand])]
        order = cand[np.argsort(-x[cand], kind="stable")]
        p = np.exp(x[order] - x[order[0]])
        p /= p.sum()
        if s.top_p > 0.0:
            over = np.cumsum(p) > s.top_p
            drop = np.zeros(len(p), bool)
            drop[1:] = over[:-1]  # the token that crosses top_p stays
            order, p = order[~drop], p[~drop]
            p = p / p.sum()
        return order, p, False

    def parts(self, logits: np.ndarray, mask: np.ndarray | None = None, bias: dict[int, float] | None = None,
              allow: np.ndarray | None = None) -> Parts:
        """The distribution a draw comes from, for these logits, the histories so far and the settings.

        With a bias (forcing) the first draw is skipped: what is forced is what comes next."""
        end = self._first(logits, bias)
        ids, probs, _ = self._second(self.adjusted(logits, mask, bias, allow))
        return Parts(end, ids, probs)

    def distribution(self, logits: np.ndarray, mask: np.ndarray | None = None,
                     bias: dict[int, float] | None = None, allow: np.ndarray | None = None) -> np.ndarray:
        """The whole vocabulary's probabilities of the next token."""
        pt = self.parts(logits, mask, bias, allow)
        out = np.zeros(len(logits), np.float64)
        np.add.at(out, pt.ids, (1.0 - pt.chunk_end) * pt.probs)
        out[self.ids.chunk_eos] += pt.chunk_end
        return out

    # --- the draw --------------------------------------------------------------------------------
    def sample(self, logits: np.ndarray, mask: np.ndarray | None = None, bias: dict[int, float] | None = None,
               allow: np.ndarray | None = None) -> int:
        """Draw the next token; a token of the second draw enters its history (the chunk end does not)."""
        end = self._first(logits, bias)
        if end >= 1.0 or (end > 0.0 and self.rng.random() < end):
            return self.ids.chunk_eos
        ids, probs, outright = self._second(self.adjusted(logits, mask, bias, allow))
        tok = int(ids[0]) if len(ids) == 1 else int(ids[self.rng.choice(len(ids), p=probs)])
        if not outright:
            self.remember(tok)
        return tok

    def close(self) -> None:
        pass
