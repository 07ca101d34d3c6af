"""The chunk loop draws from the distribution the reference's duplex decoder draws from (docs/reference.md,
"Decoding"), checked against a NumPy re-derivation of that decoder (reference_sampler.py)."""
from __future__ import annotations

import numpy as np

from edge.backends.duplex_sampler import DuplexIds, DuplexSampler
from edge.backends.sampling import Sampling
from reference_sampler import ReferenceDecoder

LISTEN, TURN_EOS, CHUNK_EOS, SPEAK, TTS_PAD = 3, 4, 5, 6, 7
SPECIAL = {LISTEN, TURN_EOS, CHUNK_EOS, SPEAK, TTS_PAD}


def pair(rng: np.random.Generator, n: int) -> tuple[DuplexSampler, ReferenceDecoder]:
    """A random setting, the same for the loop's sampler and the re-derivation."""
    s = Sampling(temperature=float(rng.choice([0.0, 0.3, 0.7, 1.0, 1.6])),
                 top_k=int(rng.choice([0, 1, 3, 20, n + 5])),
                 top_p=float(rng.choice([0.0, 0.3, 0.8, 0.95, 1.0])),
                 repetition_penalty=float(rng.choice([1.0, 1.05, 1.5, 0.8])),
                 repetition_window=int(rng.choice([1, 8, 512])),
                 listen_scale=float(rng.choice([1.0, 0.5, 1.7])),
                 length_penalty=float(rng.choice([1.0, 0.8, 1.3])),
                 listen_top_k=[None, None, 1, 4][int(rng.integers(4))],
                 seed=int(rng.integers(1 << 30)))
    unusable = [int(t) for t in rng.choice(np.arange(8, n), size=int(rng.integers(0, 4)), replace=False)]
    ours = DuplexSampler(s, DuplexIds(LISTEN, TURN_EOS, CHUNK_EOS, frozenset(SPECIAL), (TTS_PAD, *unusable)))
    ref = ReferenceDecoder(LISTEN, TURN_EOS, CHUNK_EOS, SPECIAL, [TTS_PAD, *unusable], s.temperature, s.top_k,
                           s.top_p, s.repetition_penalty, s.repetition_window, s.length_penalty, s.listen_scale,
                           s.listen_top_k)
    return ours, ref


def tv(p: np.ndarray, q: np.ndarray) -> float:
    return 0.5 * float(np.abs(p - q).sum())


def test_the_loops_distribution_is_the_references_on_1200_random_cases():
    rng = np.random.default_rng(30)
    worst = 0.0
    for case in range(1200):
        n = int(rng.integers(12, 300))
        ours, ref = pair(rng, n)
        # A history of drawn tokens, control tokens among them: each decoder files them its own way.
        for tok in rng.choice(np.r_[np.arange(n), [LISTEN, SPEAK, TURN_EOS] * 20], size=int(rng.integers(0, 700))):
            ours.remember(int(tok))
            if int(tok) != CHUNK_EOS:
                (ref.generated_special if int(tok) in SPECIAL else ref.generated).append(int(tok))
        logits = (rng.normal(0, float(rng.choice([0.5, 2.0, 6.0])), n)).astype(np.float32)
        if case % 7 == 0:
            logits[rng.integers(n)] = logits.max() + 3  # one sure token
        if case % 5 == 0:
            logits[CHUNK_EOS] = logits.max() + float(rng.normal())  # the chunk end likely
        mask = [LISTEN] if case % 3 == 0 else []  # the protocol's mask while a turn is open
        p = ours.distribution(logits, np.array(mask, np.int64))
        q = ref.distribution(logits, mask)
        worst = max(worst, tv(p, q))
        assert tv(p, q) <= 1e-6, f"case {case}: total variation {tv(p, q):.3g}"
    assert abs(p.sum() - 1) < 1e-9
    print(f"worst total variation over 1200 cases: {worst:.3g}")


def test_drawing_keeps_the_histories_the_reference_keeps():
    """Over a run of draws, each draw's distribution stays the reference's: what the loop draws enters the
    history the reference would file it in (control tokens apart, the chunk end and an outright listen in none)."""
    rng = np.random.default_rng(7)
    for run in range(20):
        n = 40
        ours, ref = pair(rng, n)
        ours.s.repetition_penalty, ref.repetition_penalty = 1.6, 1.6
        for step in range(60):
            logits = rng.normal(0, 2.0, n).astype(np.float32)
            logits[[LISTEN, SPEAK]] += 2.0  # control tokens often drawn
            assert tv(ours.distribution(logits), ref.distribution(logits)) <= 1e-6, (run, step)
            tok = ours.sample(logits)
            ref.took(tok, logits)
    assert LISTEN not in ours.counts and SPEAK not in ours.counts  # control tokens never penalised


def test_the_draw_follows_its_reported_distribution():
    rng = np.random.default_rng(3)
    ours, _ = pair(rng, 30)
    ours.s.temperature, ours.s.top_k, ours.s.top_p, ours.s.listen_top_k = 1.0, 0, 0.0, None
    ours.s.repetition_penalty = 1.0
    logits = rng.normal(0, 1.0, 30).astype(np.float32)
    p = ours.distribution(logits)
    draws = np.bincount([ours.sample(logits) for _ in range(6000)], minlength=30) / 6000
    assert tv(draws, p) < 0.05


def test_temperature_comes_before_top_p():
    """On this distribution llama.cpp's order (top-k, top-p, then temperature) keeps 4 tokens; the reference
    divides by the temperature first and keeps 3."""
    s = DuplexSampler(Sampling(temperature=0.5, top_k=20, top_p=0.8, repetition_penalty=1.0),
                      DuplexIds(LISTEN, TURN_EOS, CHUNK_EOS))
    logits = np.full(10, -30.0, np.float32)
    logits[[0, 1, 2, 8]] = [2.0, 1.8, 1.7, 1.6]
    p = s.distribution(logits)
    assert np.count_nonzero(p[[0, 1, 2, 8]] > 1e-12) == 3
    t1 = np.exp(logits[[0, 1, 2, 8]].astype(float))
    assert (np.cumsum(np.sort(t1 / t1.sum())[::-1]) > 0.8).argmax() == 3  # at temperature 1: 4 kept


def test_forbidden_ids_and_the_chunk_end_only_from_the_first_draw():
    s = DuplexSampler(Sampling(temperature=1.0, top_k=0, top_p=0.0, repetition_penalty=1.0),
                      DuplexIds(LISTEN, TURN_EOS, CHUNK_EOS, frozenset(), (TTS_PAD,)))
    logits = np.zeros(10, np.float32)
    logits[TTS_PAD] = 8.0
    p = s.distribution(logits)
    assert p[TTS_PAD] == 0.0
    raw = np.exp(logits.astype(float)) / np.exp(logits.astype(float)).sum()
    assert abs(p[CHUNK_EOS] - raw[CHUNK_EOS]) < 1e-12  # the untouched chance, nothing more from the second draw
