"""Speech for the duplex tests, made with espeak-ng (cached per test run)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
import soundfile as sf

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from kernels.resample import resample  # noqa: E402

RATE = 16000


def say(text: str, voice: str = "en-us", wpm: int = 160) -> np.ndarray:
    """16 kHz speech of `text`, leading and trailing silence cut."""
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is needed (apt-get install espeak-ng)")
    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-w", f.name, text], check=True,
                       capture_output=True)
        x, rate = sf.read(f.name, dtype="float32")
    x = resample(x, rate, RATE)
    loud = np.flatnonzero(np.abs(x) > 3e-3)
    return x[loud[0]:loud[-1] + 1]


@pytest.fixture(scope="session")
def far_speech() -> np.ndarray:
    """Half a minute of the 'assistant' talking, as played by the loudspeaker."""
    text = ("The printing press changed Europe within a single lifetime. Books became cheap, and ideas moved "
            "faster than any ruler could follow. Scholars shared their findings, merchants printed price lists, "
            "and ordinary people began to read in their own languages rather than in Latin.")
    return 0.3 * say(text, "en-us", 170)
