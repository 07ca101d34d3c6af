"""What the capture node does to every microphone block before anything downstream hears it.

In order: (tests and benchmarks only) add the simulated room's echo of what
was played; cancel the echo against the playback reference; run the speech
onset detector (Silero VAD, 32 ms frames) on the cleaned audio. An onset
while the assistant is audible asks for playback to be ducked at once.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from edge.audio_format import RATE
from edge.capture.echo import FRAME, AlignedEchoCanceller
from edge.capture.reference import ReferenceTimeline
from edge.capture.room import RoomEcho, RoomSettings
from edge.capture.window import SampleWindow
from edge.detect.level import speech_level_db

log = logging.getLogger(__name__)
NS = 1_000_000_000
AUDIBLE_DB = -50.0  # the reference counts as playing above this level


@dataclass
class Activity:
    kind: str  # "onset" or "offset"
    onset_ns: int
    t_ns: int
    level_db: float
    voiced_ms: float
    playback: bool  # the assistant was audible at the onset


class DuplexListener:
    def __init__(self, *, cancel: bool, room: RoomSettings | None = None, detect: bool = True,
                 threads: int = 1, keep_s: float = 10.0, virtual: bool = False) -> None:
        self.refs = ReferenceTimeline(keep_s, rewrite=not virtual)
        self.room = RoomEcho(room) if room is not None else None
        self.aec = AlignedEchoCanceller() if cancel else None
        self.detector = None
        if detect:
            from edge.detect.onset import OnsetDetector

            self.detector = OnsetDetector(threads=threads)
        self._clean = SampleWindow(int(keep_s * RATE))  # recent cleaned audio, for levels
        self._onset: tuple[int, bool] | None = None  # (onset sample index, playback at onset)

    def process(self, mic: np.ndarray, start: int) -> tuple[np.ndarray, list[Activity]]:
        """Clean one block starting at session sample `start` (whole 10 ms frames); return it and speech events."""
        mic = np.asarray(mic, np.float32)
        if self.room is not None:
            mic = mic + self.room.echo(self.refs.take(start - self.room.delay, len(mic)))
        if self.aec is not None:
            ref = self.refs.take(start, len(mic))
            usable = len(mic) - len(mic) % FRAME
            if usable:
                mic = np.concatenate([self.aec.process(mic[:usable], ref[:usable]), mic[usable:]])
        self._clean.put(start, mic)
        events: list[Activity] = []
        if self.detector is not None:
            for ev in self.detector.feed(mic, start * NS // RATE):
                on = ev.onset_ns * RATE // NS
                if ev.kind == "onset":
                    self._onset = (on, self.audible(on))
                    events.append(self._activity("onset", ev.detected_ns))
                elif self._onset is not None:
                    events.append(self._activity("offset", ev.onset_ns))
                    self._onset = None
        return mic, events

    def _activity(self, kind: str, t_ns: int) -> Activity:
        assert self._onset is not None
        on, playback = self._onset
        end = t_ns * RATE // NS
        seg = self._clean.segment(on, end)
        level = speech_level_db(seg)
        return Activity(kind, on * NS // RATE, t_ns, -120.0 if level is None else level,
                        (end - on) * 1000 / RATE, playback)

    def audible(self, index: int, window_s: float = 0.3) -> bool:
        """Was the assistant's playback audible around sample `index`?"""
        w = int(window_s * RATE)
        r = self.refs.take(index - w, 2 * w)
        return len(r) > 0 and bool(10 * np.log10(float(np.mean(r * r)) + 1e-12) > AUDIBLE_DB)

    def stats(self) -> dict:
        out: dict = {"ref_blocks": self.refs.blocks}
        if self.aec is not None:
            out["echo_delay_ms"] = self.aec.delay_ms
            erle = self.aec.erle_db()
            out["erle_db"] = None if erle is None else round(erle, 1)
        return out
