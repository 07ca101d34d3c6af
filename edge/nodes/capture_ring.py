"""Capture's ring of the chunks the frontend has not yet decided, re-offered to a frontend that restarts.

Chunks travel on PUB/SUB, not as reliable messages: a frontend that dies
loses the chunks queued at its socket and those published while it comes
back. Capture therefore keeps each chunk (its PCM and the newest video frame
in it) until the frontend's ChunkDecision for it arrives, plus a couple of
decided ones (a frontend killed between its decision and its checkpoint asks
again for the chunk it decided last). A restarted frontend asks for what it
has not decided (ResendChunks) and gets it again, in order.

The ring is bounded: live, the microphone cannot wait, so past `capacity`
the oldest chunk is dropped (and counted); on the virtual clock capture
waits instead, so a restart never loses input there.
"""
from __future__ import annotations

import collections
import logging
import time
from dataclasses import dataclass

from edge import messages as m

KEEP_DECIDED = 2  # decided chunks kept too: a restart can miss the checkpoint of the last decision
RING_S = 30.0  # how much undecided input capture keeps (the frontend's restart must fit in it)


@dataclass
class Kept:
    chunk: m.AudioChunk
    pcm: bytes
    frame: tuple[m.VideoFrame, bytes] | None  # the newest frame published with the chunk


class ChunkRing:
    def __init__(self, capacity: int) -> None:
        self.capacity = max(KEEP_DECIDED + 2, capacity)
        self.kept: collections.OrderedDict[int, Kept] = collections.OrderedDict()
        self.decided = -1  # the newest chunk the frontend decided (-1: none yet)
        self.dropped = 0  # undecided chunks dropped because the ring was full
        self.resent = 0

    def add(self, chunk: m.AudioChunk, pcm: bytes, frame: tuple[m.VideoFrame, bytes] | None) -> None:
        self.kept[chunk.index] = Kept(chunk, pcm, frame)
        while len(self.kept) > self.capacity:
            index, _ = self.kept.popitem(last=False)
            if index > self.decided:
                self.dropped += 1

    def on_decided(self, index: int) -> None:
        self.decided = max(self.decided, index)
        while self.kept and next(iter(self.kept)) <= self.decided - KEEP_DECIDED:
            self.kept.popitem(last=False)

    def since(self, from_index: int) -> list[Kept]:
        """What is still kept from chunk `from_index` on, in order."""
        out = [k for i, k in self.kept.items() if i >= from_index]
        self.resent += len(out)
        return out

    def full(self, next_index: int) -> bool:
        """Publishing chunk `next_index` would push out a chunk the frontend has not decided.

        Only once the frontend has decided something: a graph without a frontend never holds capture up."""
        return self.decided >= 0 and next_index - self.decided > self.capacity - KEEP_DECIDED


class GiveUpWait:
    """A wait on the virtual clock for a frontend that may never decide: held while needed, until `bound_s` of
    wall time have passed; then it warns once and is never held again (a stalled frontend must not stop input)."""

    def __init__(self, bound_s: float, warning: str, log: logging.Logger) -> None:
        self.bound_s, self.warning, self.log = bound_s, warning, log
        self.since: float | None = None
        self.given_up = False

    def holds(self, needed: bool) -> bool:
        if self.given_up or not needed:
            self.since = None
            return False
        now = time.monotonic()
        self.since = self.since or now
        if now - self.since > self.bound_s:
            self.given_up = True
            self.log.warning(self.warning, self.bound_s)
            return False
        return True
