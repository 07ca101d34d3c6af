"""Whether a request asks to control or check a device in the home ("turn off the kitchen light").

A small chat model answers these itself ("The kitchen light has been turned off.") with nothing connected:
the embedded default delegates them by rule, and the harness's home tools (or its plain "none connected")
answer.
"""
from __future__ import annotations

import re

_DEVICE = r"(lights?|lamps?|fan|heating|heater|thermostat|blinds?|curtains?|door|lock|tv|television|switch|plug)"
_HOME = re.compile(rf"\b(turn|switch|put) (on|off)\b|\b(turn|switch|dim|brighten)\b.*\b{_DEVICE}\b|"
                   rf"\bis the [a-z ]*\b{_DEVICE} (on|off|open|closed|locked|unlocked)\b|"
                   rf"\b(lock|unlock|open|close) the [a-z ]*\b(door|blinds?|curtains?|garage)\b|"
                   rf"\bset the (thermostat|heating|temperature)\b", re.I)


def home_request(text: str) -> bool:
    return bool(_HOME.search(text))
