"""The barge-in policy on transcripts and levels, and playback staging for a mid-chunk duck."""
from __future__ import annotations

import numpy as np
import pytest

from edge.speech.playback import StagedSink
from edge.bargein.policy import BargeInPolicy, Overlap, addressed_elsewhere, speech_level_db

RATE = 16000


def tone(dbfs: float, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (np.sqrt(2) * 10 ** (dbfs / 20) * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


@pytest.fixture
def policy() -> BargeInPolicy:
    p = BargeInPolicy()
    p.observe_user(-24.0, 2500)  # the user's request, heard while the assistant was silent
    return p


@pytest.mark.parametrize("text,voiced,decision", [
    ("Mm-hmm.", 500, "backchannel"),
    ("Yeah.", 400, "backchannel"),
    ("M M M", 540, "backchannel"),  # how the recognizer spells a hum
    ("N-N-N", 480, "backchannel"),
    ("Then", 96, "noise"),  # a finished blip too short for a word: the recognizer made it up
    ("Wait, stop. Can you tell me a recipe for pancakes instead?", 2500, "interrupt"),
    ("Hey Mark, could you close the window, please?", 2000, "other"),
    ("Sarah, dinner is almost ready.", 1500, "other"),
    ("Can you grab the keys for me, Mike?", 1500, "other"),
    ("Hey Venus, stop talking.", 1200, "interrupt"),
    ("", 100, "pending"),
    ("Hey, my...", 500, "pending"),  # still being spoken: the name comes next
])
def test_decisions_from_the_transcript(policy, text, voiced, decision):
    d = policy.decide(Overlap(text, tone(-24), voiced, ongoing=False if decision != "pending" else True))
    assert d.decision == decision, d.reason


def test_quiet_speech_is_background_whatever_it_says(policy):
    d = policy.decide(Overlap("Can you tell me about the weather instead?", tone(-46), 2500, False))
    assert d.decision == "background" and d.level_db == pytest.approx(-46, abs=0.5)
    loud = policy.decide(Overlap("Can you tell me about the weather instead?", tone(-27), 2500, False))
    assert loud.decision == "interrupt"


def test_speech_level_ignores_pauses():
    x = np.concatenate([tone(-20, 0.5), np.zeros(RATE, np.float32), tone(-20, 0.3)])
    assert speech_level_db(x) == pytest.approx(-20, abs=0.5)


def test_vocatives():
    assert addressed_elsewhere("Honey, have you seen my car keys?") == "Honey"
    assert addressed_elsewhere("Will you stop, please?") is None
    assert addressed_elsewhere("Tell me more about Lisa.") is None


class Collect:
    rate = 1000

    def __init__(self) -> None:
        self.out = np.zeros(3000, np.float32)

    def write(self, t_ns: int, x: np.ndarray) -> None:
        i = int(round(t_ns * self.rate / 1e9))
        self.out[i:i + len(x)] += x

    def close(self, end_ns=None) -> None:
        pass


def test_a_mid_chunk_duck_lowers_staged_audio_from_its_time_on():
    inner = Collect()
    staged = StagedSink(inner)
    staged.write(0, np.ones(1000, np.float32))  # a chunk handed over ahead
    staged.duck(400_000_000, 0.25)  # capture heard the user at 0.4 s
    staged.gain = 0.25
    staged.write(1_000_000_000, np.full(1000, 0.25, np.float32))  # the next chunk, made while ducked
    staged.duck(1_500_000_000, 1.0)  # the frontend decided: back to full volume
    staged.commit(1_000_000_000)
    assert np.all(inner.out[:400] == 1.0) and np.all(inner.out[400:1000] == 0.25)
    assert not np.any(inner.out[1000:])  # not yet past: still staged
    staged.close()
    assert np.all(inner.out[1000:1500] == 0.25) and np.allclose(inner.out[1500:2000], 1.0)


def test_speech_judged_aimed_elsewhere_stays_so_until_it_pauses():
    from types import SimpleNamespace

    from edge import messages as m
    from edge.bargein.judge import BargeInJudge

    fe = SimpleNamespace(overlap_policy=None)
    judge = BargeInJudge(fe, {})
    judge.policy.observe_user(-24.0, 2500)
    act = lambda kind, on, t: judge.on_message(SimpleNamespace(  # noqa: E731
        msg=m.SpeechActivity(kind, on, t, -24.0, 0.0, True), src="capture", t_ns=t))
    act("onset", 0, 64_000_000)
    assert fe.overlap_policy("Honey, have", tone(-24), 600, True, set()).decision == "other"
    assert fe.overlap_policy("you seen my car keys anywhere?", tone(-24), 1500, False, set()).decision == "other"
    act("offset", 0, 2_000_000_000)
    act("onset", 3_000_000_000, 3_064_000_000)  # a second later: a new stretch, judged afresh
    assert fe.overlap_policy("Have you seen my car keys anywhere?", tone(-24), 1500, False, set()).decision \
        == "interrupt"
