"""A streaming speech onset/offset detector over 32 ms frames, for ducking playback on barge-in.

Feed it audio as it arrives (any length); it answers with onset and offset
events. An onset is declared on one frame the VAD is sure of, or on two
frames in a row of weak VAD evidence that are also well above the noise
floor: unvoiced starts ("s", "h") take Silero a few frames, and waiting for
them would miss the 100 ms ducking budget. An offset needs `off_frames`
quiet frames, so short pauses do not restore the volume mid-sentence.

The frame levels come from the VAD with its probabilities (FrameProb.rms).
Capture runs one detector per session on the echo-cancelled audio
(edge/capture/listener.py) and ducks playback on an onset while the
assistant is audible.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edge.detect.vad import FRAME_NS, SileroVad


@dataclass
class OnsetEvent:
    kind: str  # "onset" or "offset"
    onset_ns: int  # session time the voice started (onset) or stopped (offset)
    detected_ns: int  # session time of the last sample that made the decision


class OnsetDetector:
    def __init__(self, threads: int = 1, on_threshold: float = 0.5, weak_threshold: float = 0.15,
                 off_threshold: float = 0.35, off_frames: int = 8, vad: SileroVad | None = None) -> None:
        self.vad = vad or SileroVad(threads)
        self.on_threshold, self.weak_threshold, self.off_threshold = on_threshold, weak_threshold, off_threshold
        self.off_frames = off_frames
        self.speaking = False
        self.noise_rms = 0.0  # running floor of the quiet frames
        self._weak_since: int | None = None
        self._quiet = 0
        self._quiet_since = 0

    def reset(self, t_ns: int = 0) -> None:
        self.vad.reset(t_ns)
        self.speaking, self._weak_since, self._quiet = False, None, 0

    def feed(self, audio: np.ndarray, t_ns: int | None = None) -> list[OnsetEvent]:
        events = []
        for fp in self.vad.feed(audio, t_ns):
            rms = fp.rms  # the frame's level, weighed against the running noise floor
            end_ns = fp.t_start_ns + FRAME_NS
            if not self.speaking:
                loud = rms >= max(0.003, 4.0 * self.noise_rms)
                if fp.prob >= self.on_threshold or (fp.prob >= self.weak_threshold and loud
                                                     and self._weak_since is not None):
                    onset = self._weak_since if self._weak_since is not None else fp.t_start_ns
                    self.speaking, self._quiet, self._weak_since = True, 0, None
                    events.append(OnsetEvent("onset", onset, end_ns))
                elif fp.prob >= self.weak_threshold and loud:
                    self._weak_since = fp.t_start_ns
                else:
                    self._weak_since = None
                    self.noise_rms = rms if self.noise_rms == 0.0 else 0.95 * self.noise_rms + 0.05 * rms
            elif fp.prob < self.off_threshold:
                if self._quiet == 0:
                    self._quiet_since = fp.t_start_ns
                self._quiet += 1
                if self._quiet >= self.off_frames:
                    self.speaking = False
                    events.append(OnsetEvent("offset", self._quiet_since, end_ns))
            else:
                self._quiet = 0
        return events
