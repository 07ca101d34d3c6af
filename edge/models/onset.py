"""A streaming speech onset/offset detector over 32 ms frames, for ducking playback on barge-in.

Feed it audio as it arrives (any length); it answers with onset and offset
events. An onset is declared after `on_frames` voiced frames in a row (two
frames: declared 64 ms after the voice starts), an offset after `off_frames`
quiet ones, so single clicks neither duck nor restore.

Wiring in the capture node (one detector per session):

    detector = OnsetDetector(threads=1)
    for event in detector.feed(block, t_block_start_ns):
        if event.kind == "onset" and playback_active:
            io.publish(Duck(0.3, "speech onset", event.onset_ns))
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edge.models.vad import FRAME_NS, SileroVad


@dataclass
class OnsetEvent:
    kind: str  # "onset" or "offset"
    onset_ns: int  # session time the voice started (onset) or stopped (offset)
    detected_ns: int  # session time of the last sample that made the decision


class OnsetDetector:
    def __init__(self, threads: int = 1, on_threshold: float = 0.5, off_threshold: float = 0.35,
                 on_frames: int = 2, off_frames: int = 8, vad: SileroVad | None = None) -> None:
        self.vad = vad or SileroVad(threads)
        self.on_threshold, self.off_threshold = on_threshold, off_threshold
        self.on_frames, self.off_frames = on_frames, off_frames
        self.speaking = False
        self._run = 0  # consecutive frames against the current state
        self._run_start_ns = 0

    def reset(self, t_ns: int = 0) -> None:
        self.vad.reset(t_ns)
        self.speaking, self._run = False, 0

    def feed(self, audio: np.ndarray, t_ns: int | None = None) -> list[OnsetEvent]:
        events = []
        for fp in self.vad.feed(audio, t_ns):
            against = fp.prob < self.off_threshold if self.speaking else fp.prob >= self.on_threshold
            if not against:
                self._run = 0
                continue
            if self._run == 0:
                self._run_start_ns = fp.t_start_ns
            self._run += 1
            if self._run >= (self.off_frames if self.speaking else self.on_frames):
                self.speaking = not self.speaking
                self._run = 0
                events.append(OnsetEvent("onset" if self.speaking else "offset", self._run_start_ns,
                                         fp.t_start_ns + FRAME_NS))
        return events
