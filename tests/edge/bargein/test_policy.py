"""The barge-in policy on transcripts and levels, the judge around it, and playback staging for a mid-chunk duck."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from edge import messages as m
from edge.audio_format import RATE
from edge.bargein.judge import BargeInJudge
from edge.bargein.policy import BargeInPolicy, addressed_elsewhere
from edge.frontend.base import Overlap
from edge.detect.level import speech_level_db
from edge.frontend.base import Chunk, ChunkOutput
from edge.frontend.scripted import NullFrontend
from edge.speech.playback import StagedSink

from duplex_helpers import Speaking

NS = 1_000_000_000


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


class Transcribing(NullFrontend):
    """A frontend that hears overlaps itself: it keeps the judge it is handed and asks it in its step."""

    def hear_overlaps(self, judge):
        self.ask = judge
        return True


def activity(judge, kind: str, onset_ns: int, t_ns: int, playback: bool = True) -> None:
    judge.on_message(SimpleNamespace(msg=m.SpeechActivity(kind, onset_ns, t_ns, -24.0, 0.0, playback), src="capture",
                                     t_ns=t_ns))


def test_speech_judged_aimed_elsewhere_stays_so_until_it_pauses():
    fe = Transcribing()
    judge = BargeInJudge(fe, {})
    judge.policy.observe_user(-24.0, 2500)
    activity(judge, "onset", 0, 64_000_000)
    assert fe.ask(Overlap("Honey, have", tone(-24), 600, True)).decision == "other"
    assert fe.ask(Overlap("you seen my car keys anywhere?", tone(-24), 1500, False)).decision == "other"
    activity(judge, "offset", 0, 2_000_000_000)
    activity(judge, "onset", 3_000_000_000, 3_064_000_000)  # a second later: a new stretch, judged afresh
    assert fe.ask(Overlap("Have you seen my car keys anywhere?", tone(-24), 1500, False)).decision == "interrupt"


def boundary(judge, fe, k: int, audio: np.ndarray) -> tuple[Chunk, ChunkOutput]:
    """One chunk as the frontend node runs it: the onset onto the chunk, the step, then the judge."""
    t0, t1 = k * NS, (k + 1) * NS
    chunk = Chunk(k, t0, t1, audio, user_speech_onset_ns=judge.overlap_onset(t0, t1))
    out = fe.step(chunk)
    judge.decide(chunk, out)
    return chunk, out


def test_chunks_carry_the_overlap_onset_until_it_is_decided_and_an_interrupt_ends_the_turn():
    fe = Speaking()
    judge = BargeInJudge(fe, {})
    loud = tone(-20)
    chunk, out = boundary(judge, fe, 0, loud)
    assert chunk.user_speech_onset_ns is None and out.control == "speak"
    # The user starts talking over the reply at 1.3 s; capture ducks and says so.
    judge.on_message(SimpleNamespace(msg=m.Duck(0.3, "speech onset", 1_300_000_000), src="capture",
                                     t_ns=1_364_000_000))
    activity(judge, "onset", 1_300_000_000, 1_364_000_000)
    decided = []
    for k in (1, 2, 3, 4):
        chunk, out = boundary(judge, fe, k, loud)
        decided.append((chunk.user_speech_onset_ns, out.info["barge_in"]["decision"] if out.info else None))
        if out.interrupt:
            break
    # Sustained speech with no transcript is pending, then an interruption once 2.4 s are voiced.
    assert decided == [(1_300_000_000, "pending"), (1_300_000_000, "pending"), (1_300_000_000, "interrupt")]
    assert out.interrupt and out.text == "" and fe.yields == 1
    chunk, out = boundary(judge, fe, 5, loud)  # decided: the overlap is no longer carried
    assert chunk.user_speech_onset_ns is None and out.control == "listen"


def test_an_overlap_that_ended_before_the_chunk_is_not_carried_once_decided():
    judge = BargeInJudge(Speaking(), {})
    activity(judge, "onset", 300_000_000, 364_000_000)  # no duck: capture had already ducked
    assert judge.overlap_onset(0, NS) == 300_000_000
    activity(judge, "offset", 300_000_000, 700_000_000)
    assert judge.overlap_onset(NS, 2 * NS) is None
    assert judge.overlap_onset(0, NS) == 300_000_000
    activity(judge, "onset", 2_500_000_000, 2_564_000_000, playback=False)  # the assistant was silent
    assert judge.overlap_onset(2 * NS, 3 * NS) is None


def test_vocatives_the_recognizer_misread():
    # Readings of overlapping speech by whisper tiny.en and base in `bench duplex`: a name after a call reads as
    # another word, and a name may lose or gain a letter; common replies after a call stay nobody's name.
    assert addressed_elsewhere("Hey, dealer.") == "dealer"  # "Hey Peter, ..."
    assert addressed_elsewhere("Sara, dinner is almost ready.") == "Sara"
    for text in ("Hey, thanks.", "Hey, you!", "Hey, my...", "Oh, interesting.", "Many, many thanks.",
                 "Hey, can you tell me a joke?", "Um, I will call you back."):
        assert addressed_elsewhere(text) is None, text


def test_a_second_reading_finds_the_name_the_first_missed_and_a_floor_taking_opening_is_not_read_again():
    asked = []

    def reread(audio):
        asked.append(len(audio))
        return "Hey, dealer.", 500.0

    p = BargeInPolicy(reread=reread)
    p.observe_user(-24.0, 2500)
    d = p.decide(Overlap("Can't either...", tone(-24), 1500, ongoing=True))
    assert d.decision == "other" and d.reread == "Hey, dealer." and "read again" in d.reason
    stop = p.decide(Overlap("Sorry, stop there. How far is the moon?", tone(-24), 1500, ongoing=True))
    assert stop.decision == "interrupt" and stop.reread is None and len(asked) == 1
    p.reread = lambda audio: ("Can you tell me about the moon?", 500.0)
    d = p.decide(Overlap("Can you tell me about the moon?", tone(-24), 1500, ongoing=True))
    assert d.decision == "interrupt" and "no one else called" in d.reason


def test_the_second_reader_is_a_larger_recognizer_than_the_first_or_none():
    from edge.bargein.overlap_asr import OverlapTranscriber, unavailable

    assert OverlapTranscriber.rereader({"overlap_reread": "off"}, "tiny.en") is None
    assert OverlapTranscriber.rereader({}, "base") is None  # the first reading was already base's
    if unavailable("base") is None:
        r = OverlapTranscriber.rereader({}, "tiny.en")
        assert r is not None and (r.model, r.beam_size) == ("base", 5)
        r.close()
