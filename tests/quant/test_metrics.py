"""Quality metrics, type parsing and size parsing against hand-computed values."""
from __future__ import annotations

import math

import numpy as np
import pytest

from quant.metrics import (ChunkDecision, compare_distributions, decision_agreement, embedding_error, log_softmax,
                           perplexity)
from quant.report import best_under, verdict
from quant.sweep import parse_size
from export.gguf_types import parse_types
from quant.plot import pareto_front


def test_kl_and_top1_against_hand_values():
    p = np.array([[0.5, 0.5], [0.9, 0.1]])
    q = np.array([[0.25, 0.75], [0.9, 0.1]])
    stats = compare_distributions(np.log(p), np.log(q))
    kl0 = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert stats.kl_mean == pytest.approx(kl0 / 2)
    assert stats.kl_max == pytest.approx(kl0)
    assert stats.top1 == 0.5  # row 0: argmax 0 vs 1; row 1 agrees


def test_identical_distributions_have_zero_kl():
    logits = np.random.default_rng(0).standard_normal((8, 50))
    stats = compare_distributions(log_softmax(logits), logits + 3.0)  # a shift does not change a distribution
    assert stats.kl_mean == pytest.approx(0, abs=1e-12) and stats.top1 == 1.0


def test_shape_mismatch_is_one_sentence():
    with pytest.raises(ValueError, match="same evaluation text"):
        compare_distributions(np.zeros((3, 4)), np.zeros((3, 5)))


def test_perplexity_of_uniform_logits_is_the_vocabulary_size():
    assert perplexity(np.zeros((6, 40)), [1, 2, 3, 4, 5, 6]) == pytest.approx(40)


def test_decision_agreement():
    ref = [ChunkDecision("listen", False, -1), ChunkDecision("speak", True, 2), ChunkDecision("speak", False, 1)]
    cand = [ChunkDecision("listen", False, -2), ChunkDecision("listen", True, -1), ChunkDecision("speak", True, 3)]
    assert decision_agreement(ref, cand) == pytest.approx((2 / 3, 2 / 3))
    with pytest.raises(ValueError, match="differ in length"):
        decision_agreement(ref, cand[:2])


def test_embedding_error():
    ref = np.array([[1.0, 0.0], [0.0, 2.0]])
    e = embedding_error(ref, ref + np.array([[0.1, 0.0], [0.0, -0.3]]))
    assert e.max_abs == pytest.approx(0.3) and e.mean_abs == pytest.approx(0.1)
    assert e.min_cosine == pytest.approx(1.0)


def test_types_sizes_and_verdict():
    assert [t.name for t in parse_types("q4_k_m, F16,Q8_0,F16")] == ["F16", "Q8_0", "Q4_K_M"]
    with pytest.raises(ValueError, match="unknown GGUF type 'Q9_Z'"):
        parse_types("F16,Q9_Z")
    assert parse_size("4.5GB") == 4500 and parse_size("800k") == 0.8 and parse_size("12MB") == 12
    with pytest.raises(ValueError, match="500MB"):
        parse_size("lots")
    rows = [{"type": "F16", "status": "ok", "size_mb": 10, "kl_mean": 0, "top1": 1, "decode_tps": 5},
            {"type": "Q8_0", "status": "ok", "size_mb": 5, "kl_mean": 0.001, "top1": 0.99, "decode_tps": 9},
            {"type": "Q4_K_M", "status": "ok", "size_mb": 3, "kl_mean": 0.04, "top1": 0.9, "decode_tps": 12},
            {"type": "IQ4_XS", "status": "failed", "error": "x"}]
    assert best_under(rows, 6)["type"] == "Q8_0"
    assert verdict(rows, 4) == "best under 4.00 MB: Q4_K_M kl 0.04000 top1 0.900 decode 12.0 tok/s"
    assert verdict(rows, 1).startswith("best under 1.00 MB: none")


def test_pareto_front():
    pts = [(10, 0.0), (5, 0.001), (6, 0.01), (3, 0.04)]  # (6, 0.01) is beaten by (5, 0.001)
    assert pareto_front(pts, lower_x_better=True) == [3, 1, 0]
