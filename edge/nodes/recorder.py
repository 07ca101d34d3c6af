"""The recorder node: appends every bus message to the session journal, in the order received."""
from __future__ import annotations

import datetime
import time

from edge import messages as m
from edge.graph.node import Node, NodeIO
from edge.settings import RecorderSettings
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

    def on_message(self, env: Envelope) -> None:
        if env.topic.startswith("sys.probe"):
            return
        if self.writer is not None:
            self.writer.append(self.io.clock.now_ns(), [env.topic.encode(), env.header, *env.payload])
        if isinstance(env.msg, m.SessionEnd):
            if self.writer is not None:
                with self.io.busy(SYNC_BOUND_S):  # a slow card can take seconds to sync
                    self.writer.flush(sync=True)
            self.done = True

    def tick(self) -> float | None:
        if self.writer is not None:
            self.writer.flush()
        return 0.5

    def stats(self) -> dict:
        if self.writer is None:
            return {"records": 0}
        out = {"records": self.writer.records, "dropped": self.writer.dropped}
        if self.writer.error:
            out["journal_error"] = self.writer.error  # health: why nothing is being recorded right now
        return out

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()



