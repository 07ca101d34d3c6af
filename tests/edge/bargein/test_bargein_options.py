"""The barge-in judge's options come from the session's settings once, with their defaults in one place."""
from __future__ import annotations

import pytest

from edge.bargein.options import BargeInOptions
from edge.bargein.voice import VoiceCue
from edge.detect import speaker
from edge.settings import SessionConfig


def test_session_settings_reach_the_judges_options():
    flat = SessionConfig(threads=2, realtime=False, extra={"asr": "base.en", "overlap_reread": "off"}).as_dict()
    o = BargeInOptions.from_config(flat)
    assert (o.threads, o.asr, o.overlap_reread, o.realtime, o.background_margin_db) == (2, "base.en", "off", False, 12.0)


def test_a_value_of_the_wrong_kind_is_one_sentence():
    with pytest.raises(ValueError, match=r"^barge-in's background_margin_db is 'loud'; it must be a number\.$"):
        BargeInOptions.from_config({"background_margin_db": "loud"})


@pytest.mark.parametrize("setting, value, kind", [("speaker_cue", "maybe", "true or false"),
                                                   ("voice_threshold", "high", "a number")])
def test_the_voice_cues_settings_are_checked_with_the_judges(setting, value, kind):
    """Before, speaker_cue "maybe" quietly left the cue on, and voice_threshold "high" failed in float()."""
    with pytest.raises(ValueError, match=rf"^barge-in's {setting} is '{value}'; it must be {kind}\.$"):
        BargeInOptions.from_config({setting: value})


def test_the_voice_cue_is_built_from_the_judges_options():
    assert VoiceCue.load(BargeInOptions.from_config({"speaker_cue": False})) is None
    if speaker.unavailable() is not None:
        pytest.skip(f"the voice encoder cannot run here: {speaker.unavailable()}")
    cue = VoiceCue.load(BargeInOptions.from_config({"voice_threshold": 0.61}))
    try:
        assert cue is not None and cue.threshold == 0.61 and cue.threshold_for(900.0) == 0.61
    finally:
        cue.close()
