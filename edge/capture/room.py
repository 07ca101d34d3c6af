"""A simulated room: the assistant's own output reaching the microphone, delayed and filtered.

For tests and benchmarks only. The echo path is a bulk delay (device
buffers plus the sound's flight), then a room impulse response: a direct
path and an exponentially decaying tail of reflections, seeded so every run
hears the same room. Filtering is streamed, so blocks join seamlessly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edge.audio_format import RATE


@dataclass
class RoomSettings:
    delay_ms: float = 120.0  # output device to microphone, buffers included
    # Level of the direct path relative to what was played. At 0 dB (the echo as loud as the user) AEC3's
    # double-talk suppression was measured to hold back the start of the user's speech by up to 0.7 s.
    gain_db: float = -6.0
    rt60_ms: float = 250.0  # reverberation time of the tail
    tail_ms: float = 150.0  # length of the modelled impulse response
    seed: int = 7

    @classmethod
    def from_config(cls, value: object) -> "RoomSettings":
        if isinstance(value, RoomSettings):
            return value
        if value is True:
            return cls()
        if not isinstance(value, dict):
            raise ValueError(f"room_echo must be a mapping of settings or true, not {value!r}")
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown room_echo setting(s) {sorted(unknown)}; known: "
                             f"{', '.join(cls.__dataclass_fields__)}")
        return cls(**{k: type(getattr(cls, k))(v) for k, v in value.items()})


def impulse_response(s: RoomSettings) -> np.ndarray:
    """Direct path at `gain_db`, then reflections decaying 60 dB over `rt60_ms`."""
    rng = np.random.default_rng(s.seed)
    n = max(1, int(s.tail_ms * RATE / 1000))
    t = np.arange(n) / RATE
    tail = rng.standard_normal(n) * 10 ** (-3 * t / (s.rt60_ms / 1000))
    tail[:int(0.003 * RATE)] = 0.0  # first reflections arrive a few ms after the direct sound
    ir = 0.35 * tail / np.sqrt(np.sum(tail ** 2) + 1e-12)
    ir[0] = 1.0
    return (ir * 10 ** (s.gain_db / 20)).astype(np.float64)


class RoomEcho:
    """What the microphone hears of the loudspeaker: `echo(ref_block)`, called with contiguous blocks."""

    def __init__(self, settings: RoomSettings) -> None:
        self.s = settings
        self.delay = int(settings.delay_ms * RATE / 1000)
        self.ir = impulse_response(settings)
        self._tail = np.zeros(len(self.ir) - 1)  # what earlier blocks still ring into later ones

    def echo(self, ref: np.ndarray) -> np.ndarray:
        """Echo of a block of reference samples already taken `delay` samples in the past (overlap-add)."""
        y = np.convolve(np.asarray(ref, np.float64), self.ir)
        y[:len(self._tail)] += self._tail
        n = len(ref)
        self._tail = y[n:].copy() if len(y) - n >= len(self.ir) - 1 else np.concatenate(
            [y[n:], np.zeros(len(self.ir) - 1 - (len(y) - n))])
        return y[:n].astype(np.float32)
