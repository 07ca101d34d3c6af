"""The recorder node: appends every bus message to the session journal, in the order received, except that a
message is held until the messages its sender had handled are journaled (edge.timeline.causal)."""
from __future__ import annotations

import datetime
import time

from edge import messages as m
from edge.graph.node import Node, NodeIO
from edge.settings import RecorderSettings
from edge.timeline.causal import CausalOrder
from edge.timeline.journal import JournalWriter
from edge.wire import Envelope

SYNC_BOUND_S = 30.0


class RecorderNode(Node):
    name = "recorder"
    settings_type = RecorderSettings
    hears_everything = True  # the journal keeps every message on the bus

    def __init__(self, io: NodeIO, settings: RecorderSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: RecorderSettings = settings
        self.writer: JournalWriter | None = None
        self.last_flush = time.monotonic()
        self.order = CausalOrder()

    def setup(self) -> None:
        path = self.settings.journal
        if path:
            # A restarted recorder keeps the first journal and starts a numbered continuation.
            if self.restore.get("parts"):
                path = f"{path}.{self.restore['parts']}"
            session = {"kind": "venus-edge-session", "config": self.settings.session,
                       "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}
            self.writer = JournalWriter(path, session)
            self.io.control(m.Checkpoint(self.name, {"parts": int(self.restore.get("parts", 0)) + 1}))

    def _write(self, items: list[tuple[int, Envelope]]) -> None:
        if self.writer is not None:
            for t_recv, env in items:
                self.writer.append(t_recv, [env.topic.encode(), env.header, *env.payload])

    def on_message(self, env: Envelope) -> None:
        if env.topic.startswith("sys.probe"):
            return
        t_recv = self.io.clock.now_ns()
        if isinstance(env.msg, m.SessionEnd):
            self._write(self.order.release_all())  # the end marker comes last
            self._write([(t_recv, env)])
            if self.writer is not None:
                with self.io.busy(SYNC_BOUND_S):  # a slow card can take seconds to sync
                    self.writer.flush(sync=True)
            self.done = True
            return
        self._write(self.order.push(t_recv, env, time.monotonic()))

    def tick(self) -> float | None:
        self._write(self.order.expire(time.monotonic()))
        if self.writer is not None:
            self.writer.flush()
        return 0.5

    def stats(self) -> dict:
        if self.writer is None:
            return {"records": 0}
        out = {"records": self.writer.records, "dropped": self.writer.dropped,
               "held_for_causes": self.order.held_total, "journaled_without_cause": self.order.let_go}
        if self.writer.error:
            out["journal_error"] = self.writer.error  # health: why nothing is being recorded right now
        return out

    def close(self) -> None:
        if self.writer is not None:
            self._write(self.order.release_all())
            self.writer.close()



