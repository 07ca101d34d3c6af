"""Fixtures: tiny Omni and Audio bundles (built once per test session), inputs, frontend settings."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

sys.path.insert(0, str(Path(__file__).parent))
from bundle_support import make_bundle  # noqa: E402

# Small context so the window slides within a short test; one thread (shared CPUs).
BASE = {"n_ctx": 512, "kv_high": 448, "kv_low": 320, "threads": 1, "tts_codes_per_token": 3}


@pytest.fixture(scope="session")
def bundle_cache(tmp_path_factory) -> Path:
    """VENUS_TEST_CACHE keeps bundles across runs while developing; by default one per test session."""
    where = os.environ.get("VENUS_TEST_CACHE")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        return Path(where)
    return tmp_path_factory.mktemp("venus-bundles")


@pytest.fixture(scope="session")
def omni_bundle(bundle_cache) -> Path:
    return make_bundle(bundle_cache, "omni")


@pytest.fixture(scope="session")
def audio_bundle(bundle_cache) -> Path:
    return make_bundle(bundle_cache, "audio")


def speechy(seconds: float, seed: int = 0) -> np.ndarray:
    """Voiced-looking audio: a pitch sweep with harmonics under a syllable-rate envelope, then silence."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    f0 = 140 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000
    voice = sum(np.sin(k * phase) / k for k in range(1, 6))
    env = (np.sin(2 * np.pi * 4 * t) > 0).astype(np.float32) * (t < seconds / 2)
    return (0.2 * voice * env + 0.003 * rng.standard_normal(len(t))).astype(np.float32)


@pytest.fixture(scope="session")
def input_wav(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("venus-in") / "in.wav"
    sf.write(path, speechy(12.0), 16000, subtype="PCM_16")
    return path


@pytest.fixture(scope="session")
def input_video(tmp_path_factory) -> Path:
    import cv2

    path = tmp_path_factory.mktemp("venus-video") / "in.avi"
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (112, 84))
    for i in range(50):
        frame = np.zeros((84, 112, 3), np.uint8)
        frame[:, : (i * 2) % 112] = (40 * (i % 6), 120, 200)
        out.write(frame)
    out.release()
    return path
