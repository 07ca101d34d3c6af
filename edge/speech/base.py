"""The speech decoder interface: text in, audio out, streamed."""
from __future__ import annotations

from typing import Iterator, Protocol

import numpy as np


class SpeechDecoder(Protocol):
    name: str
    sample_rate: int  # of the arrays `synthesize` yields

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        """Yield float32 mono audio, one piece per sentence (or finer), as soon as each is ready."""

    def close(self) -> None: ...
