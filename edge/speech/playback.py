"""The speech node's side of echo cancellation: publish what is handed to the device, and stage it.

`ReferenceTap` sits between the player and the sink: every block written
to the output device is also published, time-stamped, as the playback
reference (PCM s16le, the device's rate). On the virtual clock the speech
node hands a whole chunk of audio over ahead of time, like a device
buffer; `StagedSink` holds it until the chunk has passed, so a duck that
capture asks for mid-chunk still lowers the samples from its own time on.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from edge.speech.sinks import AudioSink
from kernels.resample import float_to_pcm16

Publish = Callable[[int, int, bytes], None]  # (t_ns, n_samples, pcm) -> None


class ReferenceTap:
    def __init__(self, inner: AudioSink, publish: Publish) -> None:
        self.inner = inner
        self.rate = inner.rate
        self.publish = publish

    def write(self, t_ns: int, samples: np.ndarray) -> None:
        self.inner.write(t_ns, samples)
        if len(samples):
            self.publish(t_ns, len(samples), float_to_pcm16(samples))

    def close(self, end_ns: int | None = None) -> None:
        self.inner.close(end_ns)


class StagedSink:
    """Blocks wait here until `commit(t)`; `duck(t, gain)` re-scales what is staged from time t on."""

    def __init__(self, inner: AudioSink) -> None:
        self.inner = inner
        self.rate = inner.rate
        self._blocks: list[tuple[int, np.ndarray, float]] = []  # (t_ns, samples, gain they were made at)
        self.gain = 1.0  # the gain the player renders at; set by the speech node

    def write(self, t_ns: int, samples: np.ndarray) -> None:
        self._blocks.append((t_ns, np.array(samples, np.float32), self.gain))

    def _index(self, t0: int, t_ns: int, n: int) -> int:
        return min(n, max(0, int(round((t_ns - t0) * self.rate / 1e9))))

    def duck(self, t_ns: int, gain: float) -> None:
        out = []
        for t0, x, g in self._blocks:
            i = self._index(t0, t_ns, len(x))
            if i >= len(x) or g <= 0:
                out.append((t0, x, g))
                continue
            if i:  # the head keeps its gain
                out.append((t0, x[:i], g))
            out.append((t0 + int(i * 1e9 / self.rate), x[i:] * (gain / g), gain))
        self._blocks = out

    def commit(self, until_ns: int | None = None) -> None:
        """Hand every staged sample before `until_ns` (all, if None) to the real sink."""
        keep = []
        for t0, x, g in self._blocks:
            i = len(x) if until_ns is None else self._index(t0, until_ns, len(x))
            if i:
                self.inner.write(t0, x[:i])
            if i < len(x):
                keep.append((t0 + int(i * 1e9 / self.rate), x[i:], g))
        self._blocks = keep

    def close(self, end_ns: int | None = None) -> None:
        self.commit()
        self.inner.close(end_ns)
