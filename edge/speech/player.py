"""Playback on the session timeline: pieces play back to back as the clock passes them.

The same code serves a live speaker (the clock is real) and a file session
on the virtual clock. Interrupts cut at a time; ducking scales the gain.
"""
from __future__ import annotations

import collections
import hashlib
from dataclasses import dataclass, field

import numpy as np

from edge.speech.sinks import AudioSink


@dataclass
class AudioPiece:
    speak_id: str
    utterance: int
    seq: int
    epoch: int
    samples: np.ndarray  # float32 at the sink's rate
    ready_ns: int
    last: bool = False
    backend_id: str = ""
    recv_delay_ns: int = 0
    start_ns: int | None = None
    written_ns: int = 0  # when its first samples went to the sink (the clock's time then)
    pos: int = 0
    _hash: "hashlib._Hash" = field(default_factory=hashlib.sha1)

    def digest(self) -> str:
        return self._hash.hexdigest()


class Player:
    def __init__(self, sink: AudioSink) -> None:
        self.sink = sink
        self.rate = sink.rate
        self.queue: collections.deque[AudioPiece] = collections.deque()
        self.cursor_ns = 0
        self.gain = 1.0

    @property
    def active(self) -> bool:
        return bool(self.queue) and self.queue[0].start_ns is not None and self.queue[0].pos > 0

    def pending(self) -> bool:
        return bool(self.queue)

    def end_ns(self) -> int:
        """When everything queued will have played."""
        t = self.cursor_ns
        for p in self.queue:
            start = p.start_ns if p.start_ns is not None else max(t, p.ready_ns)
            t = start + int(len(p.samples) * 1e9 / self.rate)
        return t

    def enqueue(self, piece: AudioPiece) -> None:
        self.queue.append(piece)

    def advance(self, now_ns: int) -> list[AudioPiece]:
        """Play everything due up to now; return the pieces that finished."""
        done = []
        while self.queue:
            p = self.queue[0]
            if p.start_ns is None:
                p.start_ns = max(self.cursor_ns, p.ready_ns)
            if p.start_ns >= now_ns:
                break
            upto = min(len(p.samples), int((now_ns - p.start_ns) * self.rate / 1e9))
            if upto > p.pos:
                block = p.samples[p.pos:upto]
                p._hash.update((np.clip(block, -1, 1) * 32767).astype("<i2").tobytes())
                self.sink.write(p.start_ns + int(p.pos * 1e9 / self.rate), block * self.gain)
                p.written_ns = p.written_ns or now_ns
                p.pos = upto
            if p.pos < len(p.samples):
                break
            self.cursor_ns = p.start_ns + int(len(p.samples) * 1e9 / self.rate)
            done.append(self.queue.popleft())
        return done

    def cut(self, epoch: int, t_ns: int) -> list[AudioPiece]:
        """Drop every piece older than `epoch`; the one playing stops at `t_ns`. Returns what was cut."""
        self.advance(t_ns)
        cut = [p for p in self.queue if p.epoch < epoch]
        self.queue = collections.deque(p for p in self.queue if p.epoch >= epoch)
        if cut:
            self.cursor_ns = max(self.cursor_ns, min(t_ns, max(
                (p.start_ns or t_ns) + int(p.pos * 1e9 / self.rate) for p in cut)))
        return cut
