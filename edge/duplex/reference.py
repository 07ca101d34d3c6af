"""The playback reference on the session timeline, at the microphone's rate.

The speech node publishes the exact samples it hands to the output device
(at the device's rate, stamped with the session time they sound). Capture
keeps them here at 16 kHz, so the echo canceller (and the simulated room)
can ask for "what played at time t". Contiguous blocks go through one
streaming resampler, so block edges leave no artefacts; samples the
resampler still holds back read as silence until they arrive.
"""
from __future__ import annotations

import numpy as np
import soxr

RATE = 16000


def ns_to_index(t_ns: int, rate: int = RATE) -> int:
    return int(round(t_ns * rate / 1e9))


class ReferenceTimeline:
    def __init__(self, keep_s: float = 10.0) -> None:
        self.keep = int(keep_s * RATE)
        self._base = 0  # sample index of _buf[0]
        self._buf = np.zeros(0, np.float32)
        self._stream: soxr.ResampleStream | None = None
        self._stream_rate = 0
        self._stream_next_ns = -1  # session time the next contiguous block would start at
        self._stream_out = 0  # next output sample index of the running stream
        self.covered_ns = 0  # the reference is known (played or silent) up to here
        self.blocks = 0

    def add(self, t_ns: int, samples: np.ndarray, rate: int) -> None:
        """One block handed to the device at `rate`, starting at session time `t_ns`."""
        samples = np.asarray(samples, np.float32)
        end_ns = t_ns + int(round(len(samples) * 1e9 / rate))
        self.blocks += 1
        if rate == RATE:
            self._put(ns_to_index(t_ns), samples)
        else:
            contiguous = self._stream is not None and rate == self._stream_rate and abs(t_ns - self._stream_next_ns) < 1e6
            if not contiguous:
                self._flush_stream()
                self._stream = soxr.ResampleStream(rate, RATE, 1, dtype="float32", quality="HQ")
                self._stream_rate, self._stream_out = rate, ns_to_index(t_ns)
            assert self._stream is not None
            out = self._stream.resample_chunk(samples)
            self._put(self._stream_out, out)
            self._stream_out += len(out)
            self._stream_next_ns = end_ns
        self.covered_ns = max(self.covered_ns, end_ns)

    def _flush_stream(self) -> None:
        if self._stream is not None:
            tail = self._stream.resample_chunk(np.zeros(0, np.float32), last=True)
            self._put(self._stream_out, tail)
            self._stream = None

    def _put(self, start: int, x: np.ndarray) -> None:
        if not len(x):
            return
        if not len(self._buf):
            self._base = start
        if start < self._base:  # older than what is kept
            x, start = x[self._base - start:], self._base
            if not len(x):
                return
        off = start - self._base
        end = off + len(x)
        if end > len(self._buf):
            self._buf = np.concatenate([self._buf, np.zeros(end - len(self._buf), np.float32)])
        self._buf[off:end] = x
        if len(self._buf) > 2 * self.keep:  # forget what no delay can reach any more
            drop = len(self._buf) - self.keep
            self._buf, self._base = self._buf[drop:], self._base + drop

    def take(self, start: int, n: int) -> np.ndarray:
        """n samples from sample index `start` (16 kHz session samples); silence where nothing played."""
        out = np.zeros(n, np.float32)
        lo, hi = max(start, self._base), min(start + n, self._base + len(self._buf))
        if hi > lo:
            out[lo - start:hi - start] = self._buf[lo - self._base:hi - self._base]
        return out

    def scale_from(self, t_ns: int, gain: float) -> None:
        """Playback was ducked from `t_ns`: what is already here was played at `gain` from then on."""
        off = max(0, ns_to_index(t_ns) - self._base)
        self._buf[off:] *= gain
