"""Shared settings and inputs of the Venus tests (imported by conftest and the test modules)."""
from __future__ import annotations

import numpy as np

# Small context so the window slides within a short test; one thread (shared CPUs).
BASE = {"n_ctx": 512, "kv_high": 448, "kv_low": 320, "threads": 1, "tts_chunk_draws": 4}


def speechy(seconds: float, seed: int = 0) -> np.ndarray:
    """Voiced-looking audio: a pitch sweep with harmonics under a syllable-rate envelope, then silence."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    f0 = 140 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000
    voice = sum(np.sin(k * phase) / k for k in range(1, 6))
    env = (np.sin(2 * np.pi * 4 * t) > 0).astype(np.float32) * (t < seconds / 2)
    return (0.2 * voice * env + 0.003 * rng.standard_normal(len(t))).astype(np.float32)
