"""Recent samples on the session timeline, by sample index, written in place.

Capture writes here every 20 ms block; growing an array per block copied
the whole window each time (measured: 65-95 us a block at 10 s kept). The
buffer is allocated once at twice the window and shifted by a window's
worth only when full, so a block costs its own size.
"""
from __future__ import annotations

import numpy as np


class SampleWindow:
    def __init__(self, keep: int) -> None:
        self.keep = keep  # samples always kept behind the newest one
        self.base = 0  # sample index of data[0]
        self.data = np.zeros(2 * keep, np.float32)
        self.end = 0  # data[end:] is zeros (never written)
        self.empty = True

    def put(self, start: int, x: np.ndarray) -> None:
        """Write samples starting at sample index `start` (older than what is kept: dropped)."""
        if not len(x):
            return
        if self.empty:
            self.base, self.empty = start, False
        if start < self.base:
            x, start = x[self.base - start:], self.base
            if not len(x):
                return
        off = start - self.base
        stop = off + len(x)
        if stop > len(self.data):  # full: keep the newest `keep` samples up to this write's end
            drop = stop - self.keep
            kept = max(0, self.end - drop)
            if kept:
                self.data[:kept] = self.data[drop:self.end]
            self.data[kept:] = 0.0
            self.base, self.end, off, stop = self.base + drop, kept, off - drop, self.keep
            if off < 0:  # a write longer than the window: only its newest part is kept
                x, off = x[-off:], 0
        self.data[off:stop] = x
        self.end = max(self.end, stop)

    def take(self, start: int, n: int) -> np.ndarray:
        """n samples from sample index `start`; zeros where nothing was written."""
        out = np.zeros(n, np.float32)
        lo, hi = max(start, self.base), min(start + n, self.base + self.end)
        if hi > lo:
            out[lo - start:hi - start] = self.data[lo - self.base:hi - self.base]
        return out

    def segment(self, start: int, stop: int) -> np.ndarray:
        """What is kept of [start, stop): clipped to the window, not padded."""
        lo, hi = max(0, start - self.base), max(0, min(stop, self.base + self.end) - self.base)
        return self.data[lo:hi].copy() if hi > lo else np.zeros(0, np.float32)

    def scale_from(self, index: int, gain: float) -> None:
        """Everything from sample index `index` on, times `gain`."""
        self.data[max(0, index - self.base):self.end] *= gain
