"""Short vocalisations are not words, and a voice much quieter than the user's is not answered.

Real speech made with espeak-ng voices no other test uses: a hummed "mm-hm" that the recognizer writes as
words ("And then make him", "I'm a chum") lets the reply go on, judged by its length, its energy and the
recognizer's own confidence; the same voices' short interruptions still stop it. A news voice 11-12 dB under
the user, in a voice the encoder does not clearly take for the user's, is background.
"""
from __future__ import annotations

import pytest

from edge.bargein.policy import BargeInPolicy
from edge.bargein import voice as voice_cue
from edge.bench.duplex_suite import USER_DBFS, set_level, trim
from edge.detect import speaker
from edge.detect.asr import Transcriber
from edge.frontend.base import Overlap

from duplex_helpers import say

VOICES = ("en-us+victor", "en-us+Rob", "en-gb-x-rp+m2")


@pytest.fixture(scope="module")
def tiny() -> Transcriber:
    return Transcriber(1, "tiny.en")


def overlap(asr: Transcriber, text: str, voice: str, db: float = 0.0) -> Overlap:
    audio = set_level(trim(say(text, voice, 160)), USER_DBFS + db)
    heard = asr.transcribe(audio)
    return Overlap(heard, audio, len(audio) / 16.0, False, set(), asr.likelihood)


@pytest.mark.parametrize("voice", VOICES)
def test_a_hummed_backchannel_misread_as_words_lets_the_reply_go_on(tiny, voice):
    policy = BargeInPolicy()
    policy.observe_user(USER_DBFS, 2000.0)
    o = overlap(tiny, "Mm-hm.", voice)
    d = policy.decide(o)
    assert d.decision == "backchannel", (o.text, d.reason)


@pytest.mark.parametrize("voice", VOICES)
@pytest.mark.parametrize("said", ["Stop.", "What?", "Tell me more.", "Go back."])
def test_short_interruptions_in_the_same_voices_still_stop_the_reply(tiny, voice, said):
    policy = BargeInPolicy()
    policy.observe_user(USER_DBFS, 2000.0)
    o = overlap(tiny, said, voice)
    d = policy.decide(o)
    assert d.interrupts, (said, o.text, d.reason)


@pytest.mark.skipif(speaker.unavailable() is not None, reason=str(speaker.unavailable()))
def test_a_news_voice_well_under_the_user_is_background_and_the_user_is_not(tiny):
    user, news = "en-us+victor", "en-us+Mr_Serious"
    request = set_level(trim(say("Please explain in detail how a steam engine works.", user, 160)), USER_DBFS)
    cue = voice_cue.VoiceCue()
    cue.enrol(request)
    policy = BargeInPolicy(voice=cue)
    policy.observe_user(USER_DBFS, 3000.0)
    radio = overlap(tiny, "In the news this hour, the harbour reopened after the storm.", news, -11.0)
    assert policy.decide(radio).decision == "background"
    asks = overlap(tiny, "Sorry, how long did the first railway take to build?", user, -6.0)
    assert policy.decide(asks).interrupts
    cue.close()
