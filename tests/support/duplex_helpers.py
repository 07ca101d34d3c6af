"""Speech for the duplex tests, made with espeak-ng."""
from __future__ import annotations

import shutil
import subprocess
import tempfile

import numpy as np
import pytest
import soundfile as sf

from edge.audio_format import RATE
from edge.frontend.base import Chunk, ChunkOutput
from edge.frontend.scripted import NullFrontend
from kernels.resample import resample


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


class Speaking(NullFrontend):
    """Speaks every chunk until told to yield; hears nothing itself."""

    def __init__(self) -> None:
        self.speaking, self.yields = True, 0

    def step(self, chunk: Chunk) -> ChunkOutput:
        return ChunkOutput("speak", "and so on") if self.speaking else ChunkOutput("listen")

    def yield_turn(self) -> None:
        self.speaking, self.yields = False, self.yields + 1
