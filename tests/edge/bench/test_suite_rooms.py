"""The duplex suite's rooms: a second person and a television at the user's level, in voices the cue tells apart."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import soundfile as sf

from edge.audio_format import RATE
from edge.bench.duplex_suite import ROOM_VOICES, VOICES, build_suite
from edge.detect import speaker
from edge.detect.level import speech_level_db


@pytest.mark.skipif(not shutil.which("espeak-ng"), reason="espeak-ng is needed (apt-get install espeak-ng)")
def test_a_room_has_the_users_request_then_another_voice_as_loud_as_the_user(tmp_path):
    cases = build_suite(tmp_path, voices=len(VOICES) + 1, skip=len(VOICES))  # the first room: espeak-ng only
    assert [(c.category, c.room, c.voice) for c in cases] == [
        (cat, True, ROOM_VOICES[0].user.label) for cat in ("interruption", "other", "background")]
    by = {c.category: c for c in cases}
    mic, _ = sf.read(by["background"].wav, dtype="float32")
    user, _ = sf.read(by["background"].user_wav, dtype="float32")
    ev = slice(int(by["background"].event_start_s * RATE), int(by["background"].event_end_s * RATE))
    request = user[:ev.start]
    assert speech_level_db(mic[ev]) == pytest.approx(speech_level_db(request), abs=1.5)  # the TV as loud as the user
    assert not np.any(user[ev])  # and not the user's
    if speaker.unavailable() is None:  # the second person really is another voice to the cue
        from edge.bargein.voice import THRESHOLD

        enc = speaker.VoiceEncoder()
        other, _ = sf.read(by["other"].wav, dtype="float32")
        ev = slice(int(by["other"].event_start_s * RATE), int(by["other"].event_end_s * RATE))
        assert float(enc.embed(request) @ enc.embed(other[ev])) < THRESHOLD


@pytest.mark.skipif(not shutil.which("espeak-ng"), reason="espeak-ng is needed (apt-get install espeak-ng)")
def test_a_held_out_household_has_new_names_and_a_television_louder_than_the_user(tmp_path):
    from edge.bench.duplex_suite import EVENTS, HOUSEHOLD_PARTS, HOUSEHOLD_TV_DB, ROOM_EVENTS

    lo, hi = HOUSEHOLD_PARTS["held-out"]
    cases = [c for c in build_suite(tmp_path, voices=lo + 1, skip=lo) if c.voice.startswith("espeak")]
    assert [c.name.rsplit("-", 2)[1:] for c in cases] == [["other", "user"], ["other", "second"],
                                                          ["background", "tv"]]
    suite_texts = {t for texts in (*EVENTS.values(), *ROOM_EVENTS.values()) for t in texts}
    assert not suite_texts & {c.event for c in cases}
    tv = cases[2]
    mic, _ = sf.read(tv.wav, dtype="float32")
    user, _ = sf.read(tv.user_wav, dtype="float32")
    ev = slice(int(tv.event_start_s * RATE), int(tv.event_end_s * RATE))
    # louder than the user by the policy's own measure too (the suite sets levels on its own frames)
    assert speech_level_db(mic[ev]) > speech_level_db(user[:ev.start]) + HOUSEHOLD_TV_DB / 2
    aside, _ = sf.read(cases[0].user_wav, dtype="float32")  # the user's own aside is the user's speech
    assert np.any(aside[int(cases[0].event_start_s * RATE):int(cases[0].event_end_s * RATE)])
