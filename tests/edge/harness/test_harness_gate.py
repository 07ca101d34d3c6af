"""The delivery gate: silence gap, voice hold, playback, laxity order, the 8 s rule, progress last."""
from __future__ import annotations

import numpy as np
import pytest

from edge.harness.gate import Candidate, DeliveryGate, GateSettings

MS = 1_000_000


def cand(wid: str, ready_ms: int, expires_ms: int, text: str = "x" * 8, kind: str = "result") -> Candidate:
    return Candidate(wid, f"{wid}:r1", text, kind, ready_ms * MS, expires_ms * MS)


@pytest.mark.parametrize("wait_ms,gap", [(0, 800), (4000, 600), (11000, 250), (60000, 250)])
def test_required_gap_shrinks_with_waiting(wait_ms, gap):
    assert DeliveryGate().required_gap_ms(wait_ms) == gap


def test_order_by_laxity_then_the_8_second_rule_then_progress_last():
    g = DeliveryGate()
    now = 20_000
    a = cand("a", 15_000, 100_000)  # plenty of time left
    b = cand("b", 15_000, 40_000)  # tighter: goes before a
    c = cand("c", 11_000, 500_000)  # waited 9 s: goes first whatever its laxity
    d = cand("d", 19_000, 30_000, kind="progress")  # tightest of all, but only a progress notice
    assert [x.work_id for x in g.order([a, b, c, d], now * MS)] == ["c", "b", "a", "d"]
    e = cand("e", 10_000, 500_000)  # waited longer than c: first among the overdue
    assert [x.work_id for x in g.order([c, e, b], now * MS)][:2] == ["e", "c"]


def test_speaking_time_counts_in_laxity():
    g = DeliveryGate()
    short, long_ = cand("s", 0, 30_000, "x" * 4), cand("l", 0, 40_000, "x" * 160)  # 1 s vs 40 s to say
    assert g.laxity_ns(short, 0) == 29_000 * MS and g.laxity_ns(long_, 0) == 0
    assert [x.work_id for x in g.order([short, long_], 0)] == ["l", "s"]
    assert not g.fresh_enough(long_, 0) and g.fresh_enough(short, 0)


def test_voice_is_held_250_ms_and_quiet_noise_is_not_voice():
    g = DeliveryGate(GateSettings(rms_threshold=0.02))
    g.voice.add(0, np.full(16000, 0.01, np.float32))  # under the threshold
    assert not g.voice.speaking(0) and g.silence_ms(1000 * MS) == float("inf")
    audio = np.zeros(16000, np.float32)
    audio[3200:4800] = 0.1  # voiced 200-300 ms
    g.voice.add(0, audio)
    assert g.voice.speaking(549 * MS) and not g.voice.speaking(550 * MS)
    assert g.silence_ms(1000 * MS) == 700


def test_select_waits_for_boundary_quiet_playback_and_earlier_release():
    g = DeliveryGate()
    c = [cand("a", 0, 600_000)]
    assert g.select(c, 1000 * MS, idle_boundary=False) is None
    g.on_playback(True, 1000 * MS)
    assert g.select(c, 2000 * MS, True) is None
    g.on_playback(False, 2000 * MS)
    assert g.select(c, 2500 * MS, True) is None  # 500 ms after playback < 675 ms needed after 2.5 s waiting
    assert g.select(c, 2700 * MS, True, inflight_since_ns=2600 * MS) is None  # a reply not yet started
    assert g.select(c, 2700 * MS, True) is c[0]
