"""Text from a session made safe for a terminal: no control characters but newline and tab.

Skill results, transcripts and model output are printed after a session; an ESC or BEL in them
would otherwise retitle the terminal, clear the screen or worse.
"""
from __future__ import annotations

from edge.language.plain_text import plain


def printable(text: object) -> str:
    """The project's one sanitiser (edge/plain_text.py): escape sequences go whole, not only their ESC."""
    return plain(text)


def say(line: object, **kwargs) -> None:
    """print() for anything that carries session text."""
    print(printable(line), **kwargs)
