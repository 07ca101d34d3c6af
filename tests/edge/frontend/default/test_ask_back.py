"""A turn the recognizer itself found unlikely is asked back in one short sentence, not answered.

"Who wrote Romeo and Juliet?" in espeak-ng's en-us+m7 at 190 words a minute is heard "Who wrote from your end
Juliet?" by whisper base (-1.15 per token) and was answered as heard.
"""
from __future__ import annotations

import numpy as np
import pytest

from edge.bench import spoken
from edge.detect.asr import Heard
from edge.detect.confidence import doubt
from edge.frontend.base import Chunk
from edge.frontend.default.settings import Settings
from edge.language.ask_back import NOT_CAUGHT

NS = 1_000_000_000


def _steps(fe, audio: np.ndarray, k0: int) -> list:
    outs = []
    for i in range(0, len(audio), 16000):
        piece = np.pad(audio[i:i + 16000], (0, max(0, i + 16000 - len(audio))))
        k = k0 + i // 16000
        outs.append(fe.step(Chunk(k, k * NS, (k + 1) * NS, piece)))
    return outs


def _turn(fe, text: str, voice: str, wpm: int, k0: int) -> tuple[list[str], str, list[str]]:
    """What was heard, what the frontend said, and what it delegated, for one spoken turn after silence."""
    _steps(fe, np.zeros(16000 * 6, np.float32), k0)  # any earlier reply and its playback are over
    audio = np.zeros(16000 * 7, np.float32)
    clip = spoken.say(text, voice, wpm)
    audio[4800:4800 + len(clip)] = 0.8 * clip
    outs = _steps(fe, audio, k0 + 6)
    return [o.user_text for o in outs if o.user_text], " ".join(o.text for o in outs if o.text), \
        [d.instruction for o in outs for d in o.delegates]


def test_a_misheard_question_is_asked_back_and_a_clear_one_is_answered(frontend):
    heard, said, delegated = _turn(frontend, "Who wrote Romeo and Juliet?", "en-us+m7", 190, 400)
    assert said == NOT_CAUGHT and not delegated, (heard, said)
    heard, said, delegated = _turn(frontend, "What is two plus two?", "en-us", 165, 430)
    assert delegated and not said, (heard, said)


def test_did_you_say_is_asked_for_an_unlikely_word_and_a_yes_answers_it():
    from types import SimpleNamespace

    from edge.frontend.base import ChunkOutput
    from edge.frontend.default.asking import AskingBack

    heard = Heard("Turn off the kitchen lamp.", -0.3)
    asr = SimpleNamespace(heard=heard, word_probabilities=lambda text: [("Turn", 0.9), ("off", 0.8), ("the", 0.9),
                                                                         ("kitchen", 0.02), ("lamp.", 0.7)])
    asking = AskingBack()
    asking.s, asking.asr = Settings(ask_back_word=0.05), asr
    out = ChunkOutput(control="listen")
    assert asking._ask_back(heard.text, heard, out) == "Did you say Turn off the kitchen lamp?"
    assert out.info["asked_back"]["word"] == "kitchen"
    assert asking._confirmed("Yes.") == "Turn off the kitchen lamp."
    assert asking._confirmed("Yes.") is None  # asked once, confirmed once
    asking.s = Settings()  # the default: no word test, so a transcript whisper is sure of is answered
    assert asking._ask_back(heard.text, heard, ChunkOutput(control="listen")) is None


def test_asking_back_is_a_setting():
    assert Settings.from_config({"ask_back": False}).ask_back is False
    assert Settings.from_config({"ask_back_logprob": -0.5}).ask_back_logprob == -0.5
    with pytest.raises(ValueError, match=r"^the default frontend's ask_back_logprob is 'low'; it must be a number\.$"):
        Settings.from_config({"ask_back_logprob": "low"})


def test_only_an_unlikely_transcript_or_content_word_is_doubted():
    s = Settings()
    assert doubt(Heard("What is 6 times 8?", -0.15), s.ask_back_logprob) is None
    assert doubt(Heard("Sixth time made is 1960.", -1.4), s.ask_back_logprob).why == "unlikely"
    words = [("What", 0.9), ("is", 0.2), ("sixth", 0.03), ("time", 0.6)]
    assert doubt(Heard("What is sixth time", -0.2), s.ask_back_logprob, words, 0.1).word == "sixth"
    assert doubt(Heard("What is sixth time", -0.2), s.ask_back_logprob, words[:2], 0.1) is None  # "is": no content


def test_words_that_will_be_asked_back_are_not_drafted_but_an_unsure_sum_is():
    from edge.frontend.default.asking import AskingBack

    asking = AskingBack()
    asking.s = Settings()
    misheard = "Who wrote from your end Juliet?"
    assert asking._not_caught(misheard, Heard(misheard, -1.15))  # asked back: a draft would be thrown away
    assert not asking._not_caught(misheard, Heard(misheard, -0.2))
    assert not asking._not_caught("What is 6 times 8?", Heard("What is 6 times 8?", -1.2))  # the sum is said back
    assert not asking._not_caught(misheard, None)
