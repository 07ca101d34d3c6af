"""Sample-rate conversion and PCM packing used by capture and speech every chunk."""
from __future__ import annotations

import numpy as np
import soxr  # libsoxr: fast, anti-aliased, and cheap to import (a node restart must be quick)


def resample(x: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """High-quality resampling of float32 mono audio."""
    x = np.asarray(x, dtype=np.float32)
    if src_rate == dst_rate or x.size == 0:
        return x
    return soxr.resample(x, src_rate, dst_rate, quality="HQ").astype(np.float32, copy=False)


def to_mono(x: np.ndarray) -> np.ndarray:
    return x if x.ndim == 1 else x.mean(axis=1).astype(np.float32)


# The same scale as libsndfile (1/32768), so file -> chunk -> file is bit-exact (replay relies on it).
def float_to_pcm16(x: np.ndarray) -> bytes:
    return np.clip(np.round(np.asarray(x, np.float32) * 32768.0), -32768, 32767).astype("<i2").tobytes()


def pcm16_to_float(b: bytes) -> np.ndarray:
    return np.frombuffer(b, dtype="<i2").astype(np.float32) / 32768.0
