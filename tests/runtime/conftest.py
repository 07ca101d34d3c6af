from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent


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


@pytest.fixture
def script(tmp_path) -> Path:
    p = tmp_path / "script.txt"
    p.write_text("# chunk action text\n1 speak Hello there.\n3 delegate What is the weather in Paris?\n"
                 "4 speak Let me check.\n")
    return p


@pytest.fixture
def faulty_path(monkeypatch):
    """Child processes can import the faulty test nodes."""
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    monkeypatch.syspath_prepend(str(HERE))
