"""The voices a Wyoming client may ask for, shared fairly between clients.

A voice is not thread-safe, so one sentence at a time is made under its lock:
the lock is taken per sentence, not per request, so a client asking for a long
text holds the voice for one sentence at a time and another client's short
request is made in between (no client waits for another's whole synthesis).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterator, Protocol

import numpy as np

MAX_TEXT = 2000  # characters in one request: about two minutes of speech


class Voice(Protocol):
    sample_rate: int

    def synthesize(self, text: str) -> Iterator[np.ndarray]: ...


@dataclass(frozen=True)
class VoiceInfo:
    name: str
    description: str
    language: str


class Voices:
    """Named voices, the first being the default, each behind its own lock."""

    def __init__(self, voices: dict[str, tuple[Voice, VoiceInfo]]) -> None:
        if not voices:
            raise ValueError("a Wyoming server needs at least one voice")
        self._voices = voices
        self._locks = {name: threading.Lock() for name in voices}
        self.default = next(iter(voices))

    @property
    def infos(self) -> list[VoiceInfo]:
        return [info for _, info in self._voices.values()]

    def pick(self, name: str | None) -> str:
        """The voice called `name` (the default when None); a sentence naming the installed ones otherwise."""
        if not name:
            return self.default
        if name not in self._voices:
            raise ValueError(f"there is no voice {name!r} here; the installed voices are "
                             f"{', '.join(self._voices)}")
        return name

    def voice(self, name: str | None = None) -> Voice:
        return self._voices[name or self.default][0]

    def rate(self, name: str) -> int:
        return int(self._voices[name][0].sample_rate)

    def sentences(self, text: str, name: str) -> Iterator[np.ndarray]:
        """The audio of `text`, a sentence at a time, each made under the voice's lock (call from a worker
        thread, one `next` at a time)."""
        if len(text) > MAX_TEXT:
            raise ValueError(f"the text is {len(text)} characters; this server says at most {MAX_TEXT} at once, "
                             "so send it in parts")
        voice = self._voices[name][0]
        made = voice.synthesize(text)
        while True:
            with self._locks[name]:
                piece = next(made, None)
            if piece is None:
                return
            if len(piece):
                yield piece
