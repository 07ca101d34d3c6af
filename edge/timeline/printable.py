"""Text from a session made safe for a terminal: no control characters but newline and tab.

Skill results, transcripts and model output are printed after a session; an ESC or BEL in them
would otherwise retitle the terminal, clear the screen or worse.
"""
from __future__ import annotations

# C0 (but tab and newline), DEL and C1: the characters a terminal acts on instead of showing.
_CONTROLS = {c: None for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)] if c not in (0x09, 0x0A)}


def printable(text: object) -> str:
    return str(text).translate(_CONTROLS)


def say(line: object, **kwargs) -> None:
    """print() for anything that carries session text."""
    print(printable(line), **kwargs)
