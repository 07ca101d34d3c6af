"""Test nodes for the bus: a capture that interleaves several topics, a frontend that answers each chunk.

Both log what they sent and received, in order, to the JSON file named by their `out` setting (on close,
which every exit path calls)."""
from __future__ import annotations

import json
import time
from pathlib import Path

from edge import messages as m
from edge.graph.node import Node
from edge.wire import Envelope

CHUNKS = 240
PERIOD_S = 0.005
SAMPLES = 16000  # 1 s chunks: a large message lags a small one through the proxy


def key(msg: m.Message) -> list:
    """What identifies one message of these tests: its type and the number it carries."""
    if isinstance(msg, (m.AudioChunk, m.ChunkDecision)):
        return [msg.TYPE, msg.index]
    if isinstance(msg, m.SpeechActivity):
        return [msg.TYPE, msg.onset_ns]
    if isinstance(msg, m.Duck):
        return [msg.TYPE, msg.reason]
    if isinstance(msg, m.EndOfInput):
        return [msg.TYPE, msg.last_index]
    return [msg.TYPE, ""]


class _Logging(Node):
    def __init__(self, io, settings, restore) -> None:
        super().__init__(io, settings, restore)
        self.sent: list[list] = []
        self.got: list[list] = []
        self.out: str = settings["out"]

    def send(self, msg: m.Message, payload: tuple[bytes, ...] = ()) -> None:
        self.io.publish(msg, payload)
        self.sent.append(key(msg))

    def close(self) -> None:
        with open(self.out, "w") as f:
            json.dump({"sent": self.sent, "got": self.got}, f)


class InterleavingCapture(_Logging):
    """Chunks, with speech activity every third and a duck every fifth, then the end of input."""

    name = "capture"

    def start(self) -> None:
        self.k = 0

    def tick(self) -> float | None:
        if self.k == CHUNKS:
            self.send(m.EndOfInput(CHUNKS - 1, CHUNKS * 10_000_000))
            self.done = True
            self.k += 1
        if self.k > CHUNKS:
            return None
        k = self.k
        self.send(m.AudioChunk(k, k * 10_000_000, (k + 1) * 10_000_000, n_samples=SAMPLES), (bytes(2 * SAMPLES),))
        if k % 3 == 0:
            self.send(m.SpeechActivity("onset", k, k))
        if k % 5 == 0:
            self.send(m.Duck(0.5, f"chunk {k}"))
        self.k += 1
        return PERIOD_S

    def on_message(self, env: Envelope) -> None:
        self.got.append(key(env.msg))


class AnsweringFrontend(_Logging):
    """Decides on each chunk as it arrives; finished at the end of input."""

    name = "frontend"

    def on_message(self, env: Envelope) -> None:
        self.got.append(key(env.msg))
        if isinstance(env.msg, m.AudioChunk):
            self.send(m.ChunkDecision(env.msg.index, "listen"))
        elif isinstance(env.msg, m.EndOfInput):
            self.done = True


CRASH_AT = 120  # the chunk before which a crashing capture's first life ends


class CrashingCapture(InterleavingCapture):
    """The interleaving capture, whose first life raises before chunk CRASH_AT; the next life sends everything
    again from chunk 0. Each life logs to its own file: `out`, then `out` + ".next"."""

    def setup(self) -> None:
        self.marker = Path(self.settings["out"] + ".crashed")
        self.first_life = not self.marker.exists()
        if not self.first_life:
            self.out += ".next"

    def tick(self) -> float | None:
        if self.first_life and self.k == CRASH_AT:
            self.close()
            self.marker.touch()
            time.sleep(0.2)  # what this life sent leaves its sockets before the crash
            raise RuntimeError("capture crashes here on purpose")
        return super().tick()
