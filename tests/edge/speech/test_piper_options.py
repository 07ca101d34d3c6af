"""The Piper voice's options come from the session's settings once; a value of the wrong kind is one sentence."""
from __future__ import annotations

import pytest

from edge.settings import SessionConfig
from edge.speech.piper import voice as piper


def test_session_settings_reach_the_voices_options():
    o = piper.PiperOptions.from_config(SessionConfig(threads=2, extra={"seed": 7}).as_dict())
    assert (o.threads, o.seed) == (2, 7)
    assert piper.PiperOptions.from_config({"threads": 0, "seed": None}) == piper.PiperOptions(threads=1, seed=0)


@pytest.mark.parametrize("setting, value, kind", [("threads", "two", "a whole number"),
                                                   ("threads", True, "a whole number"),
                                                   ("seed", 1.5, "a whole number")])
def test_a_value_of_the_wrong_kind_is_refused_before_the_voice_loads(setting, value, kind):
    """Before, "two" failed deep in int() with Python's own words, and True or 1.5 were quietly taken as 1."""
    with pytest.raises(ValueError) as err:
        piper.build({"threads": 1, setting: value})
    assert str(err.value) == f"the Piper voice's {setting} is {value!r}; it must be {kind}."
