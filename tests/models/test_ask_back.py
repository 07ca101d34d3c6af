"""A turn the recognizer itself found unlikely is asked back in one short sentence, not answered.

"What is six times eight?" in espeak-ng's en-us+m7 at 140 words a minute is heard "What is 6th time made?" by
whisper base, and the chat model answered "Sixth time made is 1960."; read again as a sum it is "6 times 8", which
whisper finds unlikely (-1.07 per token), so it is asked back, and a "yes" then answers it.
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


def _turn(fe, text: str, voice: str, wpm: int, k0: int) -> tuple[list[str], str, bool]:
    """What was heard, what the frontend said, and whether it delegated, for one spoken turn after silence."""
    _steps(fe, np.zeros(16000 * 6, np.float32), k0)  # any earlier reply and its playback are over
    audio = np.zeros(16000 * 7, np.float32)
    clip = spoken.say(text, voice, wpm)
    audio[4800:4800 + len(clip)] = 0.8 * clip
    outs = _steps(fe, audio, k0 + 6)
    return [o.user_text for o in outs if o.user_text], " ".join(o.text for o in outs if o.text), \
        any(o.delegates for o in outs)


def test_a_misheard_question_is_asked_back_and_a_clear_one_is_answered(frontend):
    heard, said, delegated = _turn(frontend, "What is six times eight?", "en-us+m7", 140, 400)
    assert said.startswith(NOT_CAUGHT) or said.startswith("Did you say"), (heard, said)
    assert not delegated and "1960" not in said, (heard, said)
    if said.startswith("Did you say"):  # a yes answers what was asked about: the sum goes to the calculator
        heard, said, delegated = _turn(frontend, "Yes.", "en-us", 165, 430)
        assert delegated, (heard, said)
    heard, said, delegated = _turn(frontend, "What is two plus two?", "en-us", 165, 460)
    assert delegated and "catch" not in said and "Did you say" not in said, (heard, said)


def test_asking_back_is_a_setting():
    assert Settings.from_config({"ask_back": False}).ask_back is False
    assert Settings.from_config({"ask_back_logprob": "-0.5"}).ask_back_logprob == -0.5
    with pytest.raises(ValueError, match=r"^the default frontend's ask_back_logprob is 'low'; it must be a number\.$"):
        Settings.from_config({"ask_back_logprob": "low"})


def test_only_an_unlikely_transcript_or_content_word_is_doubted():
    s = Settings()
    assert doubt(Heard("What is 6 times 8?", -0.15), s.ask_back_logprob) is None
    assert doubt(Heard("Sixth time made is 1960.", -1.4), s.ask_back_logprob).why == "unlikely"
    words = [("What", 0.9), ("is", 0.2), ("sixth", 0.03), ("time", 0.6)]
    assert doubt(Heard("What is sixth time", -0.2), s.ask_back_logprob, words, 0.1).word == "sixth"
    assert doubt(Heard("What is sixth time", -0.2), s.ask_back_logprob, words[:2], 0.1) is None  # "is": no content
