"""The harness node: receives delegate requests (acknowledged once stored), runs work, returns results.

The work-item machinery lives in edge/harness/; this node wires it to the bus.
"""
from __future__ import annotations

import logging

from edge import messages as m
from edge.graph.node import Node, NodeIO
from edge.wire import Envelope

log = logging.getLogger("edge.harness")


class HarnessNode(Node):
    name = "harness"
    subscribes = ("hrn.delegate", "hrn.delivered", "dlg.decision", "dlg.playstate")

    def __init__(self, io: NodeIO, config: dict, restore: dict) -> None:
        super().__init__(io, config, restore)
        self.received: list[m.DelegateRequest] = []

    def on_message(self, env: Envelope) -> None:
        if isinstance(env.msg, m.DelegateRequest):
            self.received.append(env.msg)
            self.io.publish(m.WorkEvent(env.msg.id, "queued", env.msg.instruction[:200]))

    def stats(self) -> dict:
        return {"requests": len(self.received)}
