"""The one sanitiser for text from outside: tool and skill results, their error lines, model output.

Everything such text reaches (the voice, the journal, a terminal) gets it through `plain` first. A terminal
escape sequence goes whole (ESC [ 0 m left as "[0m" was read aloud as "0 meters"), then every control
character but tab and newline (C0, DEL, C1: a terminal acts on them instead of showing them), then format
characters (zero-width joiners and bidi overrides, which hide text from a reader).
"""
from __future__ import annotations

import re
import unicodedata

# ESC or the 8-bit CSI (0x9B) with what follows: CSI parameters and final byte; OSC/DCS/PM/APC/SOS strings up to
# BEL or ST; any other two-byte ESC sequence.
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
                      r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                      r"|\x1b[ -/]*[0-~]?")
_CONTROLS: dict[int, str | None] = {c: None for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
                                     if c not in (0x09, 0x0A)}
_CONTROLS[0x0D] = " "  # a carriage return parts words as a line break would


def plain(text: object) -> str:
    """`text` with no escape sequence, control or format character left; the words stay."""
    out = _ESCAPES.sub("", str(text)).translate(_CONTROLS)
    return "".join(ch for ch in out if unicodedata.category(ch) != "Cf")
