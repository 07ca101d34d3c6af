"""The wake-word gate: with a wake word set, the frontend hears the microphone only while a conversation is on.

Asleep, every chunk goes out silent. The wake word opens the gate from the
moment it was recognized; from then on everything is heard, full duplex,
until the conversation has been idle for `idle_s`: no wake word, no speech
on the microphone, no playback of the assistant's voice and no frontend
decision that heard, said or delegated something. Then the gate closes at
the end of that chunk and waits for the wake word again.

The detector runs on its own thread, fed each chunk as it is cut, so the
chunk loop never runs the model. In real time a chunk waits at most
`wait_s` for the detector's verdict on it (a late verdict is applied to the
next chunk); on the virtual clock it waits for it, so a replay opens the
gate at the same sample.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

import numpy as np

from edge.audio_format import RATE
from edge.detect.level import speech_level_db
from edge.detect.wake import WakeDetector

NS = 1_000_000_000
SPEECH_DB = -45.0  # a chunk this loud (its loud frames, echo cancelled) counts as someone talking


@dataclass
class WakeChange:
    kind: str  # "wake": the word was heard; "sleep": the conversation went idle and the gate closed
    t_ns: int
    probability: float = 0.0


class WakeGate:
    def __init__(self, detector: WakeDetector, idle_s: float, *, wait_s: float | None) -> None:
        self.detector = detector
        self.idle_ns = int(idle_s * NS)
        self.wait_s = wait_s  # None: wait for every verdict (virtual clock)
        self.awake = False
        self.last_active_ns = 0
        self.origin_ns: int | None = None  # session time of the first sample the detector heard
        self.late = 0  # chunks that went out before the detector's verdict on them
        self.wakes = 0
        self._results: dict[int, list[WakeChange]] = {}
        self._cond = threading.Condition()
        self._queue: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._detect, name="wake-word", daemon=True)
        self._thread.start()

    def _detect(self) -> None:
        while (item := self._queue.get()) is not None:
            index, t0_ns, block = item
            try:
                found = self.detector.feed(block)
            except Exception as exc:  # noqa: BLE001 - reported on the chunk loop, which can end the node
                found, self._error = [], exc
            assert self.origin_ns is not None
            changes = [WakeChange("wake", self.origin_ns + int(d.t_s * NS), d.probability) for d in found]
            with self._cond:
                self._results[index] = changes
                self._cond.notify_all()

    def heard(self, t_end_ns: int) -> None:
        """Something in the conversation happened up to `t_end_ns` (playback, a decision that said something)."""
        self.last_active_ns = max(self.last_active_ns, t_end_ns)

    def gate(self, index: int, t0_ns: int, t1_ns: int, block: np.ndarray) -> tuple[np.ndarray, list[WakeChange]]:
        """Chunk `index` as the frontend hears it, and the changes of state it brought."""
        if self.origin_ns is None:
            self.origin_ns = t0_ns
        self._queue.put((index, t0_ns, np.asarray(block, np.float32).copy()))
        changes = self._verdicts(index)
        if self._error is not None:
            raise RuntimeError(f"the wake-word detector failed: {self._error}")
        open_from = None
        for c in changes:
            self.wakes += 1
            self.heard(c.t_ns)
            if not self.awake:
                self.awake, open_from = True, max(t0_ns, c.t_ns)
        if not self.awake:
            return np.zeros_like(block), changes
        out = block
        if open_from is not None:  # the gate opens mid-chunk: what came before (the word itself) stays unheard
            out = block.copy()
            out[:min(len(block), (open_from - t0_ns) * RATE // NS)] = 0.0
        level = speech_level_db(out)
        if level is not None and level > SPEECH_DB:
            self.heard(t1_ns)
        if t1_ns - self.last_active_ns >= self.idle_ns:
            self.awake = False
            changes.append(WakeChange("sleep", t1_ns))
        return out, changes

    def _verdicts(self, index: int) -> list[WakeChange]:
        """The detections of every chunk up to `index` not yet taken, waiting (boundedly) for this one's."""
        with self._cond:
            self._cond.wait_for(lambda: index in self._results or self._error is not None, timeout=self.wait_s)
            if index not in self._results:
                self.late += 1
            done = sorted(i for i in self._results if i <= index)
            return [c for i in done for c in self._results.pop(i)]

    def stats(self) -> dict:
        return {"wake_words": self.wakes, "wake_late": self.late, "awake": self.awake}

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=2.0)
        self.detector.close()
