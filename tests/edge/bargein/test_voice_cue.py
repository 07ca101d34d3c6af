"""Whose voice speaks over the reply: the voice encoder on real speech, and the policy's use of it."""
from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import pytest

from edge import messages as m
from edge.audio_format import RATE
from edge.bargein import voice as voice_cue
from edge.bargein.judge import BargeInJudge
from edge.frontend.base import Overlap
from edge.bench.duplex_suite import USER_DBFS, set_level
from edge.detect import speaker
from edge.frontend.base import Chunk, ChunkOutput
from edge.frontend.scripted import NullFrontend

from duplex_helpers import say

NS = 1_000_000_000
USER, OTHER = "en-gb-x-rp+m7", "en-us+f3"  # a man and a woman, as espeak-ng makes them
REQUEST = "Please explain in detail how the human heart pumps blood around the body."

needs_encoder = pytest.mark.skipif(speaker.unavailable() is not None, reason=str(speaker.unavailable()))


def speech(text: str, voice: str) -> np.ndarray:
    return set_level(say(text, voice), USER_DBFS)


class Transcribing(NullFrontend):
    """A frontend that hears overlaps itself: it keeps the judge it is handed and asks it in its step."""

    def hear_overlaps(self, judge):
        self.ask = judge
        return True


def activity(judge: BargeInJudge, kind: str, onset_ns: int, t_ns: int, playback: bool, voiced_ms: float) -> None:
    judge.on_message(SimpleNamespace(msg=m.SpeechActivity(kind, onset_ns, t_ns, USER_DBFS, voiced_ms, playback),
                                     src="capture", t_ns=t_ns))


def answered_request(judge: BargeInJudge, request: np.ndarray) -> None:
    """The user asks while nothing plays (0.5 s in), and the assistant starts its answer at the next boundary."""
    x = np.zeros(int((len(request) / RATE + 2.0) * RATE) // RATE * RATE, np.float32)
    x[RATE // 2:RATE // 2 + len(request)] = request
    end_ns = (RATE // 2 + len(request)) * NS // RATE
    activity(judge, "onset", NS // 2, NS // 2 + 64_000_000, False, 0.0)
    for k in range(len(x) // RATE):
        chunk = Chunk(k, k * NS, (k + 1) * NS, x[k * RATE:(k + 1) * RATE])
        if (k + 1) * NS > end_ns and k * NS <= end_ns:
            activity(judge, "offset", NS // 2, end_ns, False, (end_ns - NS // 2) / 1e6)
        answering = k * NS > end_ns
        judge.decide(chunk, ChunkOutput("speak", "Sure. The heart has four chambers.") if answering else
                     ChunkOutput("listen"))


@needs_encoder
def test_the_encoder_tells_two_voices_apart_and_keeps_one_voice_the_same():
    cue = voice_cue.VoiceCue()
    cue.enrol(speech(REQUEST, USER))
    same = cue.similarity(speech("Wait, stop. What is the capital of France?", USER)[:RATE])
    other = cue.similarity(speech("Wait, stop. What is the capital of France?", OTHER)[:RATE])
    assert same is not None and other is not None
    assert same >= cue.threshold > other, (same, other)
    cue.close()


@needs_encoder
def test_a_different_voice_at_the_users_level_goes_on_and_the_users_own_voice_interrupts():
    fe = Transcribing()
    judge = BargeInJudge(fe, {})
    assert judge.voice is not None
    answered_request(judge, speech(REQUEST, USER))
    assert judge.voice.enrolled == 1
    text = "Sorry to cut in, but how many legs does a spider have?"
    tv = speech(text, OTHER)[:int(1.2 * RATE)]
    d = fe.ask(Overlap(text, tv, 1200, ongoing=True))
    assert d.decision == "background", d.reason
    assert abs(d.level_db - judge.policy.user_level_db) < 3  # as loud as the user: the level alone would not do
    assert d.similarity is not None and d.similarity < d.threshold
    assert "voice other than the user's" in d.reason and f"{d.similarity:.2f}" in d.reason
    activity(judge, "offset", 20 * NS, 21 * NS, True, 1000.0)
    activity(judge, "onset", 23 * NS, 23 * NS + 64_000_000, True, 0.0)  # after a pause: a new stretch of speech
    own = fe.ask(Overlap(text, speech(text, USER)[:int(1.2 * RATE)], 1200, ongoing=True))
    assert own.decision == "interrupt" and own.similarity >= own.threshold, own.reason
    judge.close()


@needs_encoder
def test_the_journal_gives_the_similarity_and_threshold_of_a_decision():
    fe = Transcribing()
    judge = BargeInJudge(fe, {})
    answered_request(judge, speech(REQUEST, USER))
    text = "Hey Tom, could you close the window please?"
    chunk = Chunk(20, 20 * NS, 21 * NS, np.zeros(RATE, np.float32))
    out = ChunkOutput("speak", "and so on")
    d = fe.ask(Overlap(text, speech(text, OTHER), 2000, ongoing=False))
    out.info["barge_in"] = {"decision": d.decision, "text": text}
    judge.decide(chunk, out)
    bi = out.info["barge_in"]
    assert bi["decision"] == "other" and bi["voice_threshold"] == voice_cue.THRESHOLD
    assert bi["voice_similarity"] < bi["voice_threshold"] and "addressed to Tom" in bi["reason"]
    judge.close()


def test_without_the_encoder_the_policy_decides_as_before_and_says_why_once(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("VENUS_EDGE_CACHE", str(tmp_path))  # nothing converted yet
    monkeypatch.setattr(speaker, "checkpoint", lambda: None)  # and the wheel is not installed
    fe = Transcribing()
    with caplog.at_level(logging.WARNING, logger="edge.bargein"):
        judge = BargeInJudge(fe, {})
        answered_request(judge, speech(REQUEST, USER))
    said = [r.getMessage() for r in caplog.records if r.name.startswith("edge.bargein")]
    assert len(said) == 1 and "pip install --no-deps resemblyzer" in said[0], said
    assert judge.voice is None
    text = "Sorry to cut in, but how many legs does a spider have?"
    d = fe.ask(Overlap(text, speech(text, OTHER)[:int(1.2 * RATE)], 1200, ongoing=True))
    assert d.decision == "interrupt" and d.similarity is None  # the words decide, as without the cue
    judge.close()


@needs_encoder
def test_a_short_start_of_the_users_own_fast_speech_still_interrupts():
    """Half a second of a fast voice scatters: only a clearly different voice counts that early."""
    fe = Transcribing()
    judge = BargeInJudge(fe, {})
    answered_request(judge, set_level(say(REQUEST, "en-us+f2", 190), USER_DBFS))
    text = "No, no, that is enough. Tell me a joke about cats instead."
    own = set_level(say(text, "en-us+f2", 190), USER_DBFS)[:int(0.6 * RATE)]
    d = fe.ask(Overlap("No, no.", own, 550, ongoing=True))
    assert d.decision == "interrupt" and d.threshold == voice_cue.SHORT_THRESHOLD, d.reason
    judge.close()


@needs_encoder
def test_the_users_own_voice_calling_someone_the_first_reading_missed_goes_on_after_a_second_reading():
    """In the user's voice only the words decide; a larger recognizer reads the name a small one misread."""
    from edge.bargein.overlap_asr import unavailable

    if unavailable("base") is not None:
        pytest.skip(unavailable("base"))
    fe = Transcribing()  # its own reading is tiny.en's, as in `bench duplex`
    fe.asr = SimpleNamespace(name="tiny.en")
    judge = BargeInJudge(fe, {"realtime": False})
    answered_request(judge, speech(REQUEST, USER))
    aside = speech("Hey Peter, did you remember to feed the dog this morning?", USER)[:int(1.5 * RATE)]
    d = fe.ask(Overlap("Can't either...", aside, 1400, ongoing=True))  # tiny.en's reading through the room's echo
    assert d.similarity is not None and d.similarity >= d.threshold  # the voice is rightly the user's
    assert d.decision == "other" and "Peter" in d.reread and d.reread_ms > 0, (d.reason, d.reread)
    activity(judge, "offset", 20 * NS, 21 * NS, True, 1000.0)
    activity(judge, "onset", 23 * NS, 23 * NS + 64_000_000, True, 0.0)
    text = "Can you tell me how rainbows form instead?"
    own = fe.ask(Overlap(text, speech(text, USER)[:int(1.5 * RATE)], 1400, ongoing=True))
    assert own.decision == "interrupt" and own.reread is not None and "no one else called" in own.reason
    judge.close()
