"""Which espeak-ng voices and voice variants this machine has, read from espeak-ng's own listing."""
from __future__ import annotations

import subprocess

from edge.backends.locate import espeak_binary


def _listing(selector: str) -> list[list[str]]:
    """The columns of `espeak-ng --voices=<selector>`, one row per voice (the header left out)."""
    out = subprocess.run([espeak_binary(), f"--voices={selector}"], check=True, capture_output=True, text=True,
                         timeout=30).stdout.splitlines()[1:]
    return [line.split() for line in out]


def english_voices() -> list[str]:
    """English espeak-ng voices that speak on this machine (mbrola ones need data that may be absent)."""
    langs: list[str] = []
    for cols in _listing("en"):
        if len(cols) >= 5 and cols[1].startswith("en") and cols[4].startswith("gmw/") and cols[1] not in langs:
            langs.append(cols[1])
    return langs


def variants() -> list[str]:
    """espeak-ng's voice variants on this machine ("klatt", "f3", "croak", ...), by file name."""
    return sorted({cols[4][3:] for cols in _listing("variant") if len(cols) >= 5 and cols[4].startswith("!v/")})
