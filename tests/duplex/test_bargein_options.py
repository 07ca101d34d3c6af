"""The barge-in judge's options come from the session's settings once, with their defaults in one place."""
from __future__ import annotations

import pytest

from edge.bargein.options import BargeInOptions
from edge.settings import SessionConfig


def test_session_settings_reach_the_judges_options():
    flat = SessionConfig(threads=2, realtime=False, extra={"asr": "base.en", "overlap_reread": "off"}).as_dict()
    o = BargeInOptions.from_config(flat)
    assert (o.threads, o.asr, o.overlap_reread, o.realtime, o.background_margin_db) == (2, "base.en", "off", False, 12.0)


def test_a_value_of_the_wrong_kind_is_one_sentence():
    with pytest.raises(ValueError, match=r"^barge-in's background_margin_db is 'loud'; it must be a number\.$"):
        BargeInOptions.from_config({"background_margin_db": "loud"})
