"""Level meters for 16 kHz speech: one frame's RMS, and the level of a stretch of speech with its pauses left out."""
from __future__ import annotations

import numpy as np


def frame_rms(frame: np.ndarray) -> float:
    """RMS of one frame (linear, full scale 1.0); 0.0 for an empty one."""
    return float(np.sqrt(np.mean(frame ** 2))) if len(frame) else 0.0


def speech_level_db(audio: np.ndarray, frame: int = 512, top: float = 0.4) -> float | None:
    """Level of speech in dBFS: the RMS of the loudest `top` share of 32 ms frames (pauses do not count)."""
    n = len(audio) // frame
    if n == 0:
        return None
    e = np.mean(np.asarray(audio[:n * frame], np.float64).reshape(n, frame) ** 2, axis=1)
    k = max(1, int(round(n * top)))
    loud = np.sort(e)[-k:]
    return float(10 * np.log10(np.mean(loud) + 1e-12))
