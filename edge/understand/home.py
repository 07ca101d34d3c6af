"""Whether a request asks to control or check a device in the home ("turn off the kitchen light")."""
from __future__ import annotations

import re

from edge.harness.capability import Registry

_DEVICE = r"(lights?|lamps?|fan|heating|heater|thermostat|blinds?|curtains?|door|lock|tv|television|switch|plug)"
_HOME = re.compile(rf"\b(turn|switch|put) (on|off)\b|\b(turn|switch|dim|brighten)\b.*\b{_DEVICE}\b|"
                   rf"\bis the [a-z ]*\b{_DEVICE} (on|off|open|closed|locked|unlocked)\b|"
                   rf"\b(lock|unlock|open|close) the [a-z ]*\b(door|blinds?|curtains?|garage)\b|"
                   rf"\bset the (thermostat|heating|temperature)\b", re.I)


def home_request(text: str) -> bool:
    return bool(_HOME.search(text))


def home_tools(registry: Registry) -> list[str]:
    """The names of tools that reach a home (Home Assistant's own are named Hass...)."""
    return [c.name for c in registry if c.name.startswith("Hass") or "home" in c.name.lower()]
