"""Bulk delay between the playback reference and the microphone, by GCC-PHAT.

The echo canceller models only a short tail, so the reference is shifted by
the measured bulk delay first. GCC-PHAT whitens the cross-spectrum, which
makes the correlation peak sharp for speech and robust to the room's
colouring; the peak's height over the rest is the estimate's confidence.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edge.audio_format import RATE


def gcc_phat(ref: np.ndarray, mic: np.ndarray, max_delay: int) -> tuple[int, float]:
    """Lag (samples) by which `mic` trails `ref`, in [0, max_delay], and the peak-to-mean confidence."""
    n = len(ref) + len(mic)
    nfft = 1 << (n - 1).bit_length()
    cross = np.fft.rfft(mic, nfft) * np.conj(np.fft.rfft(ref, nfft))
    cross /= np.maximum(np.abs(cross), 1e-12)
    cc = np.fft.irfft(cross, nfft)[:max_delay + 1]
    mag = np.abs(cc)
    lag = int(np.argmax(mag))
    rest = np.delete(mag, slice(max(0, lag - 2), lag + 3))
    confidence = float(mag[lag] / (np.mean(rest) + 1e-12)) if len(rest) else 0.0
    return lag, confidence


@dataclass
class DelayEstimate:
    samples: int
    confidence: float

    @property
    def ms(self) -> float:
        return self.samples * 1000.0 / RATE


class DelayTracker:
    """Keeps recent reference and mic audio; re-estimates the delay every `every_s` while the reference plays."""

    def __init__(self, max_delay_ms: float = 400.0, window_s: float = 2.0, every_s: float = 1.0,
                 min_confidence: float = 8.0) -> None:
        self.max_delay = int(max_delay_ms * RATE / 1000)
        self.window = int(window_s * RATE)
        self.every = int(every_s * RATE)
        self.min_confidence = min_confidence
        self._ref = np.zeros(0, np.float32)
        self._mic = np.zeros(0, np.float32)
        self._since = 0
        self.estimate: DelayEstimate | None = None
        self.updates = 0
        self.last_confidence: float | None = None  # of the newest evaluation, confident or not
        self.evaluations = 0

    def feed(self, ref: np.ndarray, mic: np.ndarray) -> DelayEstimate | None:
        """Add aligned blocks (same session times); returns a new estimate when one was made."""
        keep = self.window + self.max_delay
        self._ref = np.concatenate([self._ref, ref])[-keep:]
        self._mic = np.concatenate([self._mic, mic])[-keep:]
        self._since += len(ref)
        if self._since < self.every or len(self._ref) < keep:
            return None
        self._since = 0
        r = self._ref[:self.window]  # reference that had time to reach the mic within max_delay
        if float(np.mean(r * r)) < 1e-6:  # nothing played: nothing to learn from
            return None
        lag, conf = gcc_phat(r, self._mic, self.max_delay)
        self.last_confidence = conf
        self.evaluations += 1
        if conf < self.min_confidence:
            return None
        self.estimate = DelayEstimate(lag, conf)
        self.updates += 1
        return self.estimate
