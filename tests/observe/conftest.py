from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # trace_rules, page helpers


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


# Speaks, delegates, then yields the floor mid-reply: every kind of mark a timeline shows.
SCRIPT = ("1 speak Hello there.\n3 delegate What is the weather in Paris?\n"
          "4 speak This is a long answer that keeps going for quite a while, longer than two seconds.\n"
          "5 interrupt\n")


@pytest.fixture
def script(tmp_path) -> Path:
    p = tmp_path / "script.txt"
    p.write_text(SCRIPT)
    return p
