"""The harness node: delegate requests in (acknowledged only once stored), results out at idle boundaries.

The work-item machinery lives in edge/harness/; this node wires it to the bus:
media feeds the evidence ring and the voice-activity gate, chunk decisions
are the boundaries at which results may be released, playback state holds
them, and Delivered confirms them.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any, Callable


from edge import messages as m
from edge.messages import work_states as W
from edge.graph.node import Node, NodeIO
from edge.harness.assemble import Built, with_vision
from edge.understand.build import understanding_harness
from edge.harness.general_model import with_general_chat
from edge.nodes.new_question import asked_anew, asked_to_stop
from edge.settings import HarnessSettings
from edge.wire import Envelope

log = logging.getLogger(__name__)
IDLE_POLL_S = 0.5


def state_dir(settings: HarnessSettings, restore: dict) -> Path:
    """Where the work-item store lives: configured, beside the journal, or a session temp dir kept across restarts."""
    if settings.harness.get("dir"):
        return Path(settings.harness["dir"])
    if settings.journal:
        return Path(f"{settings.journal}.harness")
    if restore.get("dir"):
        return Path(restore["dir"])
    return Path(tempfile.mkdtemp(prefix="venus-harness-"))


class HarnessNode(Node):
    name = "harness"
    settings_type = HarnessSettings

    def __init__(self, io: NodeIO, settings: HarnessSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: HarnessSettings = settings
        self.built: Built | None = None
        self.dir = state_dir(settings, restore)
        self.accepted = 0
        self.released = 0

    def setup(self) -> None:
        # Without a `chat` setting, the frontend decides who answers general requests (edge/harness/general_model.py).
        hcfg = with_general_chat(dict(self.settings.harness),
                                 {"frontend": self.settings.frontend, "threads": self.settings.threads})
        # The vision node's archive and eyes, when it runs; an Omni bundle's model reads the frames it kept.
        hcfg = with_vision(hcfg, self.settings.memory_dir, self._bundle_reader())
        self.built = understanding_harness(hcfg, self.dir, self.io.clock, self.io.publish, self.settings.threads)
        self.io.control(m.Checkpoint(self.name, {"dir": str(self.dir)}))

    def _bundle_reader(self) -> Callable[[], Any] | None:
        """Opens the Omni bundle's frame reader on the first memory question (its LLM is a second copy)."""
        front = self.settings.frontend
        if not (self.settings.memory_dir and front.startswith("bundle:")):
            return None
        root, threads = Path(front[len("bundle:"):]).expanduser(), self.settings.threads

        def reader() -> Any:
            from edge.frontend.venus.memory import BundleMemory
            return BundleMemory(root, threads)
        return reader

    def start(self) -> None:
        assert self.built is not None
        counts = self.built.harness.resume()
        if any(counts.values()):
            log.info("harness: resumed after a restart: %s", counts)

    def on_message(self, env: Envelope) -> None:
        assert self.built is not None
        h, msg = self.built.harness, env.msg
        if isinstance(msg, m.DelegateRequest):
            # Stored durably here, inside on_message: the runner acknowledges only after this returns.
            if h.accept(msg.id, msg.instruction, msg.opened_ns, msg.index):
                self.accepted += 1
        elif isinstance(msg, m.AudioChunk):
            if env.payload or msg.silent:
                h.on_audio(msg.t_start_ns, m.chunk_samples(msg, env.payload), msg.sample_rate)
        elif isinstance(msg, m.VideoFrame):
            rgb = m.frame_rgb(msg.width, msg.height, msg.encoding, env.payload[0]) if env.payload else None
            if rgb is not None:
                h.on_frame(msg.t_ns, rgb)
        elif isinstance(msg, m.ChunkDecision):
            turn_end = asked_anew(msg)
            if turn_end is not None:
                h.new_turn(turn_end)
            stop = asked_to_stop(msg)
            if stop is not None:
                h.stop_request(stop)
            # An interrupt reaches on_interrupt (on either clock) before this decision of its epoch.
            if h.boundary(idle=msg.control == "listen" and not msg.interrupt) is not None:
                self.released += 1
        elif isinstance(msg, m.PlaybackState):
            h.on_playback(msg.active, msg.t_ns or env.t_ns)
        elif isinstance(msg, m.SpeakText):
            if msg.backend_id:
                h.on_speak(msg.backend_id, msg.epoch)
        elif isinstance(msg, m.Delivered):
            h.on_delivered(msg.work_id, msg.result_id)
        elif isinstance(msg, m.CancelWork):
            targets = ([i.id for i in h.store.in_states(sorted(W.OWED))]
                       if msg.work_id == "*" else [msg.work_id])
            for wid in targets:
                h.cancel(wid, msg.reason)

    def on_interrupt(self, msg: m.Interrupt, t_ns: int) -> None:
        if self.built is not None:
            self.built.harness.on_interrupt(msg.epoch, by_user=msg.reason == "barge-in")

    def tick(self) -> float | None:
        if self.built is None:
            return 0.05
        self.built.harness.poll()
        if self.built.harness.jobs or self.io.clock.virtual:
            return 0.05  # work runs: timeouts and wake-ups are due at fine grain (and on the virtual clock always)
        return IDLE_POLL_S  # nothing runs: a new request starts at once (accept polls), expiry can wait

    def stats(self) -> dict:
        if self.built is None:
            return {}
        return {"accepted": self.accepted, "released": self.released, "running": len(self.built.harness.jobs),
                "work": self.built.harness.counts()}

    def close(self) -> None:
        if self.built is not None:
            self.built.close()
