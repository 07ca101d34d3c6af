"""Sample-rate conversion and PCM packing used by capture and speech every chunk."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from scipy.signal import resample_poly


def resample(x: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Polyphase resampling (anti-aliased) of float32 mono audio."""
    x = np.asarray(x, dtype=np.float32)
    if src_rate == dst_rate or x.size == 0:
        return x
    ratio = Fraction(dst_rate, src_rate).limit_denominator(1000)
    return resample_poly(x, ratio.numerator, ratio.denominator).astype(np.float32)


def to_mono(x: np.ndarray) -> np.ndarray:
    return x if x.ndim == 1 else x.mean(axis=1).astype(np.float32)


def float_to_pcm16(x: np.ndarray) -> bytes:
    return (np.clip(x, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def pcm16_to_float(b: bytes) -> np.ndarray:
    return np.frombuffer(b, dtype="<i2").astype(np.float32) / 32767.0
