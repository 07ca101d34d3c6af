"""Scoring from a hand-made, time-aligned output WAV whose answers are known."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from edge.bench.duplex import self_interruptions
from edge.bench.duplex_score import CaseScore, Segment, event_segment, merge, score_case, segments, summarize

from duplex_helpers import RATE, say

LONG = ("The printing press changed Europe within a single lifetime and books became cheap for everyone "
        "who wanted to read them in their own language")


def place(total_s: float, *parts: tuple[float, np.ndarray]) -> np.ndarray:
    out = np.zeros(int(total_s * RATE), np.float32)
    for t, x in parts:
        i = int(t * RATE)
        out[i:i + len(x)] += x[:len(out) - i]
    return out


@pytest.fixture(scope="module")
def talk() -> np.ndarray:
    return 0.2 * say(LONG, "en-us", 170)


def test_merge_joins_short_gaps_only():
    segs = [Segment(0.0, 1.0), Segment(1.5, 2.0), Segment(2.7, 3.0), Segment(5.0, 5.05)]
    assert [(s.start, s.end) for s in merge(segs, 0.6)] == [(0.0, 2.0), (2.7, 3.0), (5.0, 5.05)]
    assert [(s.start, s.end) for s in merge(segs, 0.5, min_s=0.1)] == [(0.0, 2.0), (2.7, 3.0)]


def test_an_answered_interruption_from_a_wav(tmp_path, talk):
    assert len(talk) > 4 * RATE
    reply = place(9.0, (1.0, talk[:int(3.2 * RATE)]), (5.5, talk[:int(1.5 * RATE)]))  # cut at 4.2 s, answer at 5.5
    user = place(9.0, (3.0, 0.2 * say("Wait, what about the weather?", "en-gb", 230)[:RATE]))
    sf.write(tmp_path / "reply.wav", reply, RATE)
    sf.write(tmp_path / "user.wav", user, RATE)
    r, rate = sf.read(tmp_path / "reply.wav", dtype="float32")
    u, urate = sf.read(tmp_path / "user.wav", dtype="float32")
    assistant = segments(r, rate, 0.5)
    assert len(assistant) == 2
    event = event_segment(segments(u, urate, 0.6), 3.0, 4.0)
    assert event.start == pytest.approx(3.0, abs=0.07) and event.end == pytest.approx(4.0, abs=0.1)
    s = score_case("interruption", assistant, event)
    assert s.talking and s.stopped and s.responded
    assert s.stop_latency_s == pytest.approx(1.2, abs=0.15)  # VAD ends lag the sound by up to ~0.1 s
    assert s.response_latency_s == pytest.approx(1.5, abs=0.1)


def test_talking_through_a_backchannel_from_a_wav(talk):
    reply = place(9.0, (1.0, talk))  # one long turn, never stopped
    s = score_case("backchannel", segments(reply, RATE, 0.5), Segment(3.0, 3.4))
    assert s.talking and not s.stopped and not s.responded and s.stop_latency_s is None


def test_not_talking_at_the_event_is_a_miss(talk):
    reply = place(9.0, (5.0, talk[:RATE]))
    s = score_case("other", segments(reply, RATE, 0.5), Segment(3.0, 3.4))
    assert not s.talking
    summary = summarize([s, CaseScore("other", True, stopped=False)])
    assert summary.continuation["other"] == 0.5 and summary.talking["other"] == 1


def test_summary_rates_and_medians():
    scores = [CaseScore("interruption", True, True, True, 0.8, 1.0),
              CaseScore("interruption", True, True, True, 1.2, 2.0),
              CaseScore("interruption", True, True, False, 0.9, None),
              CaseScore("interruption", True, False),
              CaseScore("backchannel", True, False, self_interruptions=1),
              CaseScore("backchannel", True, True)]
    s = summarize(scores)
    assert s.interruption_response == 0.5
    assert s.stop_ms == pytest.approx(900) and s.response_ms == pytest.approx(1500)
    assert s.continuation["backchannel"] == 0.5 and s.self_interruptions == 1


def test_self_interruptions_are_onsets_outside_any_input_speech():
    speech = [Segment(0.5, 3.0), Segment(9.0, 10.0)]
    assert self_interruptions([6.2, 9.1, 2.9, 3.2], speech) == 1  # 6.2 s: only echo was there
