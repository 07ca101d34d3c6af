"""Fixtures: tiny Omni and Audio bundles (tests/conftest.py exports them once per test session), inputs,
frontend settings."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

sys.path.insert(0, str(Path(__file__).parent))
from venus_support import speechy  # noqa: E402


@pytest.fixture(scope="session")
def bundle_cache(tiny_bundle_cache) -> Path:
    """Where tests/conftest.py exports the tiny bundles (VENUS_TEST_CACHE keeps them across runs)."""
    return tiny_bundle_cache


@pytest.fixture(scope="session")
def bundles(tiny_bundles) -> dict[str, Path]:
    """Both variants, exported once per test session for every folder (tests/conftest.py)."""
    return tiny_bundles


@pytest.fixture(scope="session")
def exported_audio_bundle(bundles) -> Path:
    """An Audio bundle exactly as the exporter writes it: nothing added, nothing edited."""
    return bundles["audio"]


@pytest.fixture(scope="session")
def omni_bundle(bundles) -> Path:
    return bundles["omni"]


@pytest.fixture(scope="session")
def audio_bundle(bundles) -> Path:
    return bundles["audio"]


@pytest.fixture(scope="session")
def input_wav(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("venus-in") / "in.wav"
    sf.write(path, speechy(12.0), 16000, subtype="PCM_16")
    return path


@pytest.fixture(scope="session")
def input_video(tmp_path_factory) -> Path:
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless (the audio extra) writes the test video")
    path = tmp_path_factory.mktemp("venus-video") / "in.avi"
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (112, 84))
    for i in range(50):
        frame = np.zeros((84, 112, 3), np.uint8)
        frame[:, : (i * 2) % 112] = (40 * (i % 6), 120, 200)
        out.write(frame)
    out.release()
    return path
