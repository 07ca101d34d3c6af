"""The chunk loop's sampler follows the reference's duplex decoder (docs/reference.md, "Decoding")."""
from __future__ import annotations

import numpy as np

from edge.backends.sampling import ChainSampler
from edge.backends.sampling import Sampling

LISTEN, TURN_EOS, CHUNK_EOS = 3, 4, 5
NONE = np.zeros(0, np.int64)


def sampler(**over) -> ChainSampler:
    return ChainSampler(Sampling(**over), LISTEN, TURN_EOS, CHUNK_EOS)


def test_the_chunk_end_is_drawn_first_from_the_untouched_distribution():
    logits = np.array([2.0, 1.0, 0.5, 0.0, 0.0, 1.5], np.float32)
    p = np.exp(logits[CHUNK_EOS]) / np.exp(logits).sum()  # temperature 1, no top-k/top-p: about 0.25
    s = sampler(seed=3)
    hits = np.mean([s.chunk_ends(logits) for _ in range(4000)])
    assert abs(hits - p) < 0.03
    assert sampler(temperature=0.0).chunk_ends(np.array([0, 0, 0, 0, 0, 9.0], np.float32))
    assert not sampler(temperature=0.0).chunk_ends(np.array([0, 9.0, 0, 0, 0, 8.0], np.float32))


def test_repetition_divides_whatever_the_sign_then_turn_end_and_listen_adjust():
    s = sampler(repetition_penalty=2.0, length_penalty=0.5, listen_scale=3.0)
    s.remember(0)
    s.remember(1)
    x = np.array([4.0, -4.0, 1.0, 2.0, 3.0, 0.0], np.float32)
    s.apply(x, NONE, None)
    assert x[0] == 2.0 and x[1] == -2.0  # a negative repeated logit rises: the released sampler's rule
    assert x[TURN_EOS] == 6.0  # positive: divided by the length penalty
    assert x[LISTEN] == 6.0  # the listen logit multiplied
    y = np.array([0.0, 0.0, 0.0, 0.0, -3.0, 0.0], np.float32)
    sampler(length_penalty=0.5).apply(y, NONE, None)
    assert y[TURN_EOS] == -1.5  # negative: multiplied


def test_listen_top_k_and_masks():
    x = np.array([5.0, 4.0, 1.0, 3.0, 0.0, 0.0], np.float32)
    assert sampler(listen_top_k=3).listen_outright(x)  # two tokens outrank listen
    assert not sampler(listen_top_k=2).listen_outright(x)
    assert not sampler().listen_outright(x)  # off by default
    s = sampler(listen_top_k=5)
    s.apply(x, np.array([LISTEN], np.int64), None)
    assert not s.listen_outright(x)  # a masked listen is never chosen
    z = np.arange(6, dtype=np.float32)
    s.apply(z, NONE, None, allow=np.array([LISTEN, CHUNK_EOS], np.int64))
    assert np.isinf(z[[0, 1, 2, 4]]).all() and z[LISTEN] == 3.0 and z[CHUNK_EOS] == 5.0
