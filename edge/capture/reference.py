"""The playback reference on the session timeline, at the microphone's rate.

The speech node publishes the exact samples it hands to the output device
(at the device's rate, stamped with the session time they sound). Capture
keeps them here at 16 kHz, so the echo canceller (and the simulated room)
can ask for "what played at time t".
"""
from __future__ import annotations

import numpy as np
import soxr

from edge.audio_format import RATE
from edge.capture.window import SampleWindow


def ns_to_index(t_ns: int, rate: int = RATE) -> int:
    return int(round(t_ns * rate / 1e9))


CONTEXT_S = 0.06  # source audio kept from the last block, to resample the next one without a seam


class ReferenceTimeline:
    def __init__(self, keep_s: float = 10.0, rewrite: bool = True) -> None:
        self.window = SampleWindow(int(keep_s * RATE))
        # Rewrite a block's last samples once the next block gives them context (live: the microphone hears
        # them later). On the virtual clock they are read at once, by the canceller and the simulated room
        # alike, so first values stay: both must see the same samples.
        self.rewrite = rewrite
        self._ctx = np.zeros(0, np.float32)  # the newest source samples of a contiguous run
        self._ctx_rate = 0
        self._ctx_start_ns = 0
        self._ctx_end_ns = -1
        self.covered_ns = 0  # the reference is known (played or silent) up to here
        self.blocks = 0

    def add(self, t_ns: int, samples: np.ndarray, rate: int) -> None:
        """One block handed to the device at `rate`, starting at session time `t_ns`.

        Each block is resampled together with the end of the one before it (when they join), and the
        earlier block's last samples are rewritten from that: a resampler's filter needs samples on
        both sides, and a streaming one would hold the newest back, which the echo canceller needs now.
        """
        samples = np.asarray(samples, np.float32)
        end_ns = t_ns + int(round(len(samples) * 1e9 / rate)) if rate else t_ns
        self.blocks += 1
        if rate == RATE:
            self.window.put(ns_to_index(t_ns), samples)
        elif len(samples):
            joined = len(self._ctx) and rate == self._ctx_rate and abs(t_ns - self._ctx_end_ns) < 1e6
            x = np.concatenate([self._ctx, samples]) if joined else samples
            x_ns = self._ctx_start_ns if joined else t_ns
            y = soxr.resample(x, rate, RATE, quality="HQ").astype(np.float32, copy=False)
            ctx_out = int(round(len(self._ctx) * RATE / rate)) if joined else 0
            skip = ctx_out // 2 if self.rewrite else ctx_out  # keep what already had context on both sides
            self.window.put(ns_to_index(x_ns) + skip, y[skip:])
            keep = min(len(x), int(CONTEXT_S * rate))
            self._ctx, self._ctx_rate, self._ctx_end_ns = x[len(x) - keep:].copy(), rate, end_ns
            self._ctx_start_ns = end_ns - int(round(keep * 1e9 / rate))
        self.covered_ns = max(self.covered_ns, end_ns)

    def take(self, start: int, n: int) -> np.ndarray:
        """n samples from sample index `start` (16 kHz session samples); silence where nothing played."""
        return self.window.take(start, n)

    def scale_from(self, t_ns: int, gain: float) -> None:
        """Playback was ducked from `t_ns`: what is already here was played at `gain` from then on."""
        self.window.scale_from(ns_to_index(t_ns), gain)
        if self._ctx_rate and len(self._ctx):  # and the source kept for the next block's resampling
            i = max(0, int(round((t_ns - self._ctx_start_ns) * self._ctx_rate / 1e9)))
            self._ctx[i:] *= gain
