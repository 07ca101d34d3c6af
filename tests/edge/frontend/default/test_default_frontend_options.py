"""The default frontend's options are built once from the session's settings, each by its own name."""
from __future__ import annotations

import pytest

from edge.frontend.default.settings import Settings
from edge.settings import SessionConfig


def test_session_settings_reach_the_options_and_none_keeps_the_frontends_own():
    flat = SessionConfig(threads=3, realtime=False, context=None, kv_type="q8_0",
                         extra={"asr": "tiny.en", "endpoint_ms": 500, "rules": False}).as_dict()
    s = Settings.from_config(flat)
    assert (s.threads, s.asr, s.endpoint_ms, s.rules, s.kv_type) == (3, "tiny.en", 500, False, "q8_0")
    assert s.context == 2048  # the session's None: the frontend's own context
    assert s.llm_budget is None  # a virtual clock: the same pieces decoded on any machine


def test_a_value_of_the_wrong_kind_is_one_sentence():
    with pytest.raises(ValueError, match=r"^the default frontend's rules is 'maybe'; it must be true or false\.$"):
        Settings.from_config({"rules": "maybe"})
    with pytest.raises(ValueError, match="endpoint_ms is 'soon'; it must be a whole number"):
        Settings.from_config({"endpoint_ms": "soon"})
