"""How capture cuts chunks on each clock, chosen once per node: real time, or the virtual clock.

Real time: a file is read as its samples fall due (sped up by `pace`),
a device paces itself; with a listener (echo cancellation, onset
detection) input goes 20 ms at a time so a duck goes out within a block
of the onset, and messages are stamped when they leave. Virtual clock:
chunks go as fast as the graph allows, every message is stamped with the
time it describes, and with echo cancellation a chunk waits until the
speech node has handed over what plays during it.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import numpy as np

from edge import messages as m
from edge.audio_format import RATE
from edge.capture.listener import Activity
from edge.clock import VirtualClock
from kernels.resample import float_to_pcm16

if TYPE_CHECKING:
    from edge.nodes.capture import CaptureNode

log = logging.getLogger(__name__)

BLOCK = 320  # 20 ms: echo cancellation and onset detection run on blocks this size
HAND_OVER = 1024  # samples (64 ms): the chunk being cut goes to the frontend in pieces at least this long
QUIET_BLOCKS = 4  # blocks read per wake-up while nothing plays (no duck can be due): 80 ms, a fifth of the wake-ups
REF_WAIT_S = 60.0  # virtual clock: how long to wait for the playback reference before going on without it


class RealTimeCapture:
    virtual = False

    def __init__(self, node: "CaptureNode") -> None:
        self.node = node
        self.pending = np.zeros(0, np.float32)  # blocks of the chunk being cut (with a listener)
        self.handed = 0  # samples of it already handed to the frontend before its boundary

    def tick(self) -> float:
        n = self.node
        assert n.audio is not None
        if n.listener is not None:
            return self._tick_block()
        if not n.audio.live:
            wait = self._due_ns(n.index) - n.io.clock.now_ns()
            if wait > 0:
                return wait / 1e9
        return n.cut_chunk()

    def _due_ns(self, k: int) -> int:
        """When chunk k's last sample is there (a file paced in real time)."""
        return int((k + 1) * self.node.chunk_ns / self.node.settings.pace)

    def _tick_block(self) -> float:
        """Clean and watch 20 ms at a time, so a duck goes out within a block of the onset."""
        n = self.node
        assert n.audio is not None and n.listener is not None
        start = n.index * n.chunk_samples + len(self.pending)
        # A duck is only due while the assistant is audible: otherwise a few blocks per wake-up are as good.
        blocks = 1 if n.listener.audible(start) else max(1, min(QUIET_BLOCKS, (n.chunk_samples - len(self.pending))
                                                               // BLOCK))
        size = blocks * BLOCK
        if not n.audio.live:  # a file paced in real time: each read when its last sample is due
            wait = int((start + size) * 1e9 / RATE / n.settings.pace) - n.io.clock.now_ns()
            if wait > 0:
                return wait / 1e9
        block = n.audio.read(size)
        if block is None:
            if n.audio.live:
                return 0.005 if blocks == 1 else 0.02  # nothing plays: no duck waits on the next look
            if len(self.pending):
                n.publish_chunk(np.concatenate([self.pending, np.zeros(n.chunk_samples - len(self.pending),
                                                                       np.float32)]))
                self.pending = np.zeros(0, np.float32)
                return 0.0
            after = n.after_file()  # the file is read: the quiet room while delegated work is owed an answer
            if after is not None:
                return after
            block = np.zeros(size, np.float32)
        self.pending = np.concatenate([self.pending, *(n.listen(block[i:i + BLOCK], start + i)
                                                       for i in range(0, len(block), BLOCK))])
        if len(self.pending) >= n.chunk_samples:
            chunk, self.pending = self.pending[:n.chunk_samples], self.pending[n.chunk_samples:]
            n.publish_chunk(chunk)
            self.handed = 0
        self._hand_over()
        return 0.0

    def _hand_over(self) -> None:
        """The chunk being cut, so far, goes to the frontend in pieces: when the user stops inside it, the
        turn's work starts then instead of at the boundary. Not while the wake word keeps the microphone
        closed (the chunk will be silence), nor in a quiet room (from the first sound on, the chunk so far goes
        whole, and the pieces go on through the chunk after the last one with sound: the end of speech)."""
        n = self.node
        new = len(self.pending) - self.handed
        if new < HAND_OVER or (n.wake is not None and not n.wake.awake) or n.quiet_room(self.pending):
            return
        t0 = n.index * n.chunk_ns
        ns = 1_000_000_000 // RATE
        piece = self.pending[self.handed:]
        n.io.publish(m.AudioSoFar(n.index, t0, t0 + self.handed * ns, t0 + len(self.pending) * ns, RATE, len(piece)),
                     [float_to_pcm16(piece)])
        self.handed = len(self.pending)

    def stamp(self, t_ns: int) -> int | None:
        """The stamp of a message about session time `t_ns`: None, stamped when it leaves."""
        return None

    def ducked(self, ev: Activity) -> None:
        """Capture asked speech to duck; the reference it hears next is already ducked."""

    def reach(self, t_ns: int) -> None:
        """A chunk ending at `t_ns` is about to go out: the real clock is there already."""


class VirtualCapture:
    virtual = True

    def __init__(self, node: "CaptureNode") -> None:
        self.node = node
        assert isinstance(node.io.clock, VirtualClock)
        self.clock: VirtualClock = node.io.clock
        self.ref_wait_since: float | None = None
        self.ref_wait_given_up = False
        self.ref_misses = 0

    def tick(self) -> float:
        n = self.node
        if n.settings.duplex.reference and n.listener is not None and not self._reference_ready():
            return 0.001  # the speech node has not yet handed over what plays during this chunk
        return n.cut_chunk()

    def _reference_ready(self) -> bool:
        """The reference must cover chunk k (handed over after chunk k-1's decision)."""
        n = self.node
        assert n.listener is not None
        if n.index == 0 or self.ref_wait_given_up:
            return True
        if n.listener.refs.covered_ns >= (n.index + 1) * n.chunk_ns:
            self.ref_wait_since = None
            return True
        now = time.monotonic()
        self.ref_wait_since = self.ref_wait_since or now
        if now - self.ref_wait_since > REF_WAIT_S:
            self.ref_misses += 1
            self.ref_wait_since = None
            self.ref_wait_given_up = self.ref_misses >= 3  # no speech node answers: stop waiting for one
            log.warning("capture: no playback reference for chunk %d after %.0f s; going on without it%s",
                        n.index, REF_WAIT_S, " (and no longer waiting)" if self.ref_wait_given_up else "")
            return True
        return False

    def stamp(self, t_ns: int) -> int | None:
        """The stamp of a message about session time `t_ns`: that time itself, so a replay stamps the same."""
        return t_ns

    def ducked(self, ev: Activity) -> None:
        """The reference was handed over ahead of time: lower it from the onset on, as the speech node does."""
        assert self.node.listener is not None
        self.node.listener.refs.scale_from(ev.t_ns, self.node.settings.duplex.duck_gain)

    def reach(self, t_ns: int) -> None:
        """A chunk ending at `t_ns` is about to go out: the session clock moves there."""
        self.clock.advance_to(t_ns)
