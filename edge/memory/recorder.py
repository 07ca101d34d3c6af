"""Frames and audio into memory: the gate picks the frames worth keeping, they are described and archived."""
from __future__ import annotations

from typing import Callable

import numpy as np

from edge.memory.archive import Archive, Entry
from kernels.gate import Decision, Gate


class Recorder:
    def __init__(self, archive: Archive, gate: Gate | None = None,
                 describe: Callable[[np.ndarray], str] | None = None,
                 encode: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        """`describe` makes a kept frame's text description, `encode` its tokens (an Omni bundle's vision
        tokens), each only for the frames the gate keeps."""
        self.archive = archive
        self.gate = gate or Gate()
        self.describe = describe
        self.encode = encode
        self.last: Entry | None = None

    def frame(self, t: float, frame: np.ndarray, tokens: np.ndarray | None = None) -> Decision:
        """Gate one sampled BGR frame at session time t; a kept one is described and stored."""
        decision = self.gate.step(frame)
        if decision.kept:
            description = self.describe(frame) if self.describe else ""
            if tokens is None and self.encode is not None:
                tokens = self.encode(frame)
            self.last = self.archive.add(t, frame, decision.kind, description, tokens)
        return decision

    def audio(self, t0: float, pcm: np.ndarray) -> None:
        self.archive.add_audio(t0, pcm)
