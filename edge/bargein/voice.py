"""Whose voice speaks over the reply: the user's, enrolled from the turns the assistant answered, or another.

A cue that does not depend on reading the words: a television at the
user's level or a second person in the room is a different voice, while the
user stays the same voice however the recognizer hears them. The profile is
the mean embedding (edge/detect/speaker.py) of the user's recent answered
turns, spoken while nothing played, so it follows the user through the
session; speech over the reply is compared with it by cosine similarity.

Enrolment runs on a worker thread of its own (a few seconds of speech costs
tens of milliseconds), so the turn's chunk is not held up; a comparison
waits for enrolments still running. When the encoder's package is missing,
the policy decides as it did without the cue, and the log says why, once.
"""
from __future__ import annotations

import collections
import logging
from concurrent.futures import Future

import numpy as np

from edge.audio_format import RATE
from edge.bargein.options import VOICE_THRESHOLD, BargeInOptions
from edge.bargein.worker import CueWorker
from edge.detect import speaker

log = logging.getLogger(__name__)

THRESHOLD = VOICE_THRESHOLD  # why this value: edge/bargein/options.py
SHORT_THRESHOLD = 0.50
SHORT_MS = 800.0
MIN_VOICE_MS = 500.0  # shorter speech is not weighed at all
MIN_ENROL_MS = 1000.0  # a turn shorter than this says too little about the voice
MAX_ENROL_S = 8.0  # the end of a longer turn is enough


class VoiceCue(CueWorker):
    def __init__(self, threshold: float = THRESHOLD, min_voice_ms: float = MIN_VOICE_MS, turns: int = 8,
                 short_threshold: float = SHORT_THRESHOLD) -> None:
        super().__init__("voice-cue", "voice encoder", "without telling voices apart")
        self.threshold, self.min_voice_ms, self.short_threshold = threshold, min_voice_ms, short_threshold
        self._encoder: speaker.VoiceEncoder | None = None
        self._turns: collections.deque[Future[np.ndarray | None]] = collections.deque(maxlen=turns)

    @classmethod
    def load(cls, options: BargeInOptions) -> "VoiceCue | None":
        """The cue, or None (logged once) when it is turned off or its encoder cannot run here."""
        if not options.speaker_cue:
            return None
        why = speaker.unavailable()
        if why is not None:
            log.warning("barge-in: speech over the reply is judged without telling voices apart: %s", why)
            return None
        return cls(options.voice_threshold)

    def _embed(self, audio: np.ndarray) -> np.ndarray | None:
        if self._encoder is None:
            self._encoder = speaker.VoiceEncoder()  # first use converts the weights once (see speaker.py)
        return self._encoder.embed(audio)

    def enrol(self, audio: np.ndarray) -> None:
        """One of the user's answered turns (spoken while nothing played): it joins the profile."""
        if self.failed is None and len(audio) >= MIN_ENROL_MS * RATE / 1000:
            self._turns.append(self.pool.submit(self._embed, np.array(audio[-int(MAX_ENROL_S * RATE):], np.float32)))

    def threshold_for(self, voiced_ms: float) -> float:
        """The similarity under which speech voiced this long is another voice than the user's."""
        return self.short_threshold if voiced_ms < SHORT_MS else self.threshold

    @property
    def enrolled(self) -> int:
        return len(self._turns)

    def profile(self) -> np.ndarray | None:
        got = [e for e in (self.result(f) for f in list(self._turns)) if e is not None]
        if not got:
            return None
        e = np.mean(got, axis=0)
        return e / (np.linalg.norm(e) + 1e-9)

    def similarity(self, audio: np.ndarray) -> float | None:
        """Cosine similarity of `audio`'s voice to the user's profile; None without a profile or enough sound."""
        if self.failed is not None or not self._turns:
            return None
        ref = self.profile()
        if ref is None:
            return None
        e = self.result(self.pool.submit(self._embed, np.array(audio, np.float32)))
        return None if e is None else float(e @ ref)
