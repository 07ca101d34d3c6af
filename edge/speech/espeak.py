"""A simple real speech decoder: Debian's espeak-ng, run as a separate program, one sentence at a time."""
from __future__ import annotations

import io
import shutil
import subprocess
from typing import Iterator

import numpy as np
import soundfile as sf

from edge.language.sentences import SPEECH_PIECE, split_sentences
from edge.language.plain_text import plain

class EspeakDecoder:
    name = "espeak"
    sample_rate = 22050

    def __init__(self, voice: str = "en-us", rate_wpm: int = 170) -> None:
        self.binary = shutil.which("espeak-ng")
        if self.binary is None:
            raise RuntimeError("espeak-ng is not installed; install it with `apt-get install espeak-ng`")
        self.voice, self.rate_wpm = voice, rate_wpm

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        for sentence in split_sentences(text, SPEECH_PIECE):
            # `--` ends the options: a sentence starting with "-" ("-fFILE", "-wout.wav") is words, never an option.
            wav = subprocess.run([self.binary, "-v", self.voice, "-s", str(self.rate_wpm), "--stdout", "--",
                                  plain(sentence)],
                                 check=True, capture_output=True, timeout=30).stdout
            audio, rate = sf.read(io.BytesIO(wav), dtype="float32")
            self.sample_rate = rate
            yield audio

    def close(self) -> None:
        pass


class NullDecoder:
    """Silence of a plausible length (60 ms per character): for graph benchmarks."""

    name = "null"
    sample_rate = 16000

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        for sentence in split_sentences(text, SPEECH_PIECE):
            yield np.zeros(int(len(sentence) * 0.06 * self.sample_rate), np.float32)

    def close(self) -> None:
        pass
