"""Which of the harness's tools reach a home (whether a request asks for one: edge/language/home_words.py)."""
from __future__ import annotations

from edge.harness.capability import Registry


def home_tools(registry: Registry) -> list[str]:
    """The names of tools that reach a home (Home Assistant's own are named Hass...)."""
    return [c.name for c in registry if c.name.startswith("Hass") or "home" in c.name.lower()]
