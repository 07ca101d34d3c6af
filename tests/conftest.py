"""Fixtures shared by the test folders that run whole sessions."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def speech_wav(tmp_path_factory) -> Path:
    """A 6 s, 16 kHz input: a spoken sentence then silence, made with espeak-ng and sox."""
    if not shutil.which("espeak-ng") or not shutil.which("sox"):
        pytest.skip("espeak-ng and sox are needed (apt-get install espeak-ng sox)")
    d = tmp_path_factory.mktemp("audio")
    raw = d / "raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(raw), "Hello, can you hear me?"], check=True)
    out = d / "input.wav"
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(out), "pad", "0.3", "6",
                    "trim", "0", "6"], check=True)
    return out
