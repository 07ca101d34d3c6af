"""A short soak: random durations, failures, timeouts, barge-ins and restarts; nothing lost or stale."""
from __future__ import annotations

from edge.bench.harness_soak import run_soak


def test_soak_with_random_restarts_loses_nothing_and_speaks_nothing_stale(tmp_path):
    r = run_soak(items=120, seed=7, restart_p=0.03, arrival_p=0.3, workdir=tmp_path)
    assert r.items == 120 and r.restarts >= 3
    assert r.lost == 0 and r.stale_spoken == 0 and r.double_delivered == 0
    assert r.states.get("delivered", 0) > 20 and r.states.get("failed(expired)", 0) > 0  # both paths exercised
    assert sum(r.states.values()) == 120
