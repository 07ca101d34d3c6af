"""The user's turn as the default frontend tracks it: its audio, and whether what was heard gets a reply."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edge.audio_format import RATE
from edge.bargein import words as barge_in
from edge.detect.asr import Heard
from edge.frontend.base import ResultToSay


def answerable(text: str) -> bool:
    """Whether a turn heard as `text` gets a reply: not nothing, not only "stop, wait", not only "mm-hm"."""
    heard = barge_in.words(text)
    return bool(heard) and not barge_in.only_stop(heard) and not barge_in.only_filler(heard)


def is_progress(result: ResultToSay) -> bool:
    """A progress notice ("I'm still checking on that."): the harness releases them as `<work id>:p`."""
    return result.id.endswith(":p")


@dataclass
class Utterance:
    onset_ns: int
    last_voice_ns: int
    audio_start_ns: int
    audio: list[np.ndarray] = field(default_factory=list)
    voiced_frames: int = 0
    over_playback: bool = False  # started while the assistant was speaking
    # The newest transcript: (last voice then, its audio's end, text, how sure whisper was of it)
    read: tuple[int, int, str, Heard | None] | None = None

    def heard(self, text: str) -> Heard | None:
        """How sure whisper was of `text`, when it is the newest transcript of this utterance (else None)."""
        return self.read[3] if self.read is not None and self.read[2] == text else None

    def samples(self, end_ns: int | None = None) -> np.ndarray:
        a = np.concatenate(self.audio) if self.audio else np.zeros(0, np.float32)
        if end_ns is not None:
            a = a[:max(0, (end_ns - self.audio_start_ns) * RATE // 1_000_000_000)]
        return a
