"""A harness node off the bus, its folder on a disk that a test fills: messages in by hand, what it says kept."""
from __future__ import annotations

import contextlib
import itertools
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import numpy as np

from edge import messages as m
from edge.clock import VirtualClock
from edge.harness import evidence
from edge.nodes.harness import HarnessNode
from edge.settings import HarnessNodeSettings
from filling_disk import Disk, FillingDatabase, FillingDisk

S = 1_000_000_000


class StubIO:
    """What the node publishes, kept in order; the supervisor's side does nothing."""

    def __init__(self) -> None:
        self.clock = VirtualClock()
        self.sent: list[m.Message] = []
        self._ids = itertools.count()

    def publish(self, msg: m.Message, payload=(), t_ns: int | None = None) -> None:
        self.sent.append(msg)

    def control(self, msg: m.Message) -> None:
        pass

    @contextlib.contextmanager
    def busy(self, bound_s: float) -> Iterator[None]:
        yield

    def new_id(self) -> str:
        return f"harness-{next(self._ids)}"

    def results(self, work_id: str) -> list[m.BackendResult]:
        return [r for r in self.sent if isinstance(r, m.BackendResult) and r.work_id == work_id]


def on(msg: m.Message, payload: list[bytes] | None = None) -> SimpleNamespace:
    """An envelope as the runner hands it over."""
    return SimpleNamespace(msg=msg, payload=payload or [], t_ns=0)


def harness_node(folder: Path, disk: Disk, monkeypatch) -> tuple[HarnessNode, StubIO]:
    """A node whose work store and evidence files are on `disk` (set up and started)."""
    opened = evidence.open_private
    monkeypatch.setattr(evidence, "open_private", lambda p, mode="wb", **kw: FillingDisk(opened(p, mode, **kw), disk))
    io = StubIO()
    node = HarnessNode(io, HarnessNodeSettings("null", None, 1, {"dir": str(folder)}), {})  # type: ignore[arg-type]
    node.setup()
    if node.built is not None:
        store = node.built.harness.store
        store.db = FillingDatabase(store.db, disk)  # type: ignore[assignment]
    node.start()
    return node, io


def speech(node: HarnessNode, io: StubIO, seconds: float = 1.0) -> None:
    """The room heard for `seconds` from now: evidence a request freezes."""
    t0 = io.clock.now_ns()
    pcm = (np.sin(np.arange(int(16000 * seconds)) / 9) * 3000).astype("<i2")
    node.on_message(on(m.AudioChunk(0, t0, t0 + int(seconds * S), 16000, len(pcm)), [pcm.tobytes()]))
    io.clock.advance(int(seconds * S))


def ask(node: HarnessNode, io: StubIO, work_id: str, words: str, wait_s: float = 10.0) -> m.BackendResult:
    """A delegated request, then listen boundaries until the node says something for it (said and played)."""
    node.on_message(on(m.DelegateRequest(work_id, words, io.clock.now_ns(), 0)))
    deadline = time.monotonic() + wait_s
    while not io.results(work_id):
        assert time.monotonic() < deadline, f"nothing was said for {words!r}"
        io.clock.advance(S // 2)
        node.tick()
        node.on_message(on(m.ChunkDecision(0, "listen", "", "", False, False, 0, 0, 0, 0.0, {})))
        time.sleep(0.01)
    said = io.results(work_id)[0]
    node.on_message(on(m.SpeakText("s-" + said.id, 1, 0, said.text, 0, said.id)))
    node.on_message(on(m.Delivered("d-" + said.id, work_id, said.id)))
    return said
