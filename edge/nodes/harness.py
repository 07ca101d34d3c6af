"""The harness node: delegate requests in (acknowledged only once stored), results out at idle boundaries.

The work-item machinery lives in edge/harness/; this node wires it to the bus:
media feeds the evidence ring and the voice-activity gate, chunk decisions
are the boundaries at which results may be released, playback state holds
them, and Delivered confirms them.

A harness folder that cannot be written (a full disk) does not stop the node: requests are declined in
words while it lasts (edge/harness/outage.py), and stored again once it can be written.
"""
from __future__ import annotations

import contextlib
import logging
import tempfile
import time
from pathlib import Path
from typing import Any, Callable


from edge import messages as m
from edge.messages import work_states as W
from edge.graph.node import Node, NodeIO
from edge.harness.assemble import Built, with_vision
from edge.harness.evidence import evidence_name
from edge.harness.outage import Outage
from edge.harness.store import StoreUnwritable
from edge.understand.build import understanding_harness
from edge.harness.general_model import with_general_chat
from edge.nodes.new_question import asked_anew, asked_to_stop
from edge.settings import HarnessNodeSettings
from edge.wire import Envelope

log = logging.getLogger(__name__)
IDLE_POLL_S = 0.5
RETRY_S = 2.0  # a folder that could not be written at the start: how often the harness is built again
BUILD_BOUND_S = 300.0  # building it then may load models: how long the supervisor waits for that step
DECLINE_TTL_NS = 60 * 1_000_000_000  # a declined request's words are worth saying this long


def state_dir(settings: HarnessNodeSettings, restore: dict) -> Path:
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
    settings_type = HarnessNodeSettings

    def __init__(self, io: NodeIO, settings: HarnessNodeSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: HarnessNodeSettings = settings
        self.built: Built | None = None
        self.dir = state_dir(settings, restore)
        self.accepted = 0
        self.released = 0
        self.declined = 0
        self.outage = Outage()
        self.refusals = 0  # the store's refused writes already seen
        self.retry_at = 0.0
        self.hcfg: dict = {}
        self.unresumed = False  # a restart's resume the folder refused: tried again before anything else runs

    def setup(self) -> None:
        # Without a `chat` setting, the frontend decides who answers general requests (edge/harness/general_model.py).
        hcfg = with_general_chat(dict(self.settings.harness),
                                 {"frontend": self.settings.frontend, "threads": self.settings.threads})
        # The vision node's archive and eyes, when it runs; an Omni bundle's model reads the frames it kept.
        self.hcfg = with_vision(hcfg, self.settings.memory_dir, self._bundle_reader())
        try:
            self.built = understanding_harness(self.hcfg, self.dir, self.io.clock, self.io.publish,
                                               self.settings.threads)
        except StoreUnwritable as exc:  # the conversation goes on without delegation; built again later
            self.outage.begin(exc)
            self.retry_at = time.monotonic() + RETRY_S
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
        if self.built is None:
            return
        try:
            counts = self.built.harness.resume()
        except StoreUnwritable as exc:
            self.outage.begin(exc)
            self.unresumed = True
            return
        self.unresumed = False
        if any(counts.values()):
            log.info("harness: resumed after a restart: %s", counts)

    def _build_again(self) -> None:
        """The folder could not be written at the start: once it can, the harness is built and starts."""
        self.retry_at = time.monotonic() + RETRY_S
        try:
            with self.io.busy(BUILD_BOUND_S):
                self.built = understanding_harness(self.hcfg, self.dir, self.io.clock, self.io.publish,
                                                   self.settings.threads)
        except StoreUnwritable:
            return
        self.outage.end(self.dir)
        self.start()

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.DelegateRequest):
            self._delegate(msg)
        elif self.built is not None:
            try:
                self._handle(env)
            except StoreUnwritable as exc:  # the new state was not stored: the store is as it was
                self.outage.begin(exc)
            self._watch()

    def _delegate(self, msg: m.DelegateRequest) -> None:
        """Stored durably here, inside on_message: the runner acknowledges only after this returns. One the
        folder cannot hold is declined in words instead (and acknowledged: there is nothing to send again)."""
        if self.built is None:
            self._decline(msg)
            return
        if self.unresumed:
            self.start()
        h = self.built.harness
        try:
            if h.accept(msg.id, msg.instruction, msg.opened_ns, msg.index):
                self.accepted += 1
        except OSError as exc:  # its evidence could not be saved
            self.outage.begin(h.store.refused(exc))
        except StoreUnwritable as exc:
            self.outage.begin(exc)
        if h.store.get(msg.id) is None:
            if h.evidence_dir is not None:  # evidence saved for a request the store then refused: no use kept
                with contextlib.suppress(OSError):
                    (h.evidence_dir / evidence_name(msg.id)).unlink(missing_ok=True)
            self._decline(msg)
        elif self.outage.down:  # stored: the folder can be written again
            self.outage.end(self.dir)
            self._requeue()
        self._watch()

    def _decline(self, msg: m.DelegateRequest) -> None:
        self.declined += 1
        self.io.publish(m.WorkEvent(msg.id, "failed", f"declined: {self.outage.why}", {"notice": True}))
        self.io.publish(m.BackendResult(f"{msg.id}:f", msg.id, self.outage.words(), "failure",
                                        self.io.clock.now_ns() + DECLINE_TTL_NS))

    def _watch(self) -> None:
        """A write the folder refused elsewhere (a task's next state, on its worker thread) starts an outage."""
        store = self.built.harness.store if self.built is not None else None
        if store is not None and store.refusals != self.refusals and store.last_refusal is not None:
            self.refusals = store.refusals
            self.outage.begin(store.last_refusal)

    def _requeue(self) -> None:
        """Work left running with no job while the folder refused its next state is run again."""
        assert self.built is not None
        try:
            if self.built.harness.requeue_stranded():
                self.outage.end(self.dir)  # the folder took a write again
        except StoreUnwritable as exc:
            self.outage.begin(exc)

    def _handle(self, env: Envelope) -> None:
        assert self.built is not None
        h, msg = self.built.harness, env.msg
        if isinstance(msg, m.AudioChunk):
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
            try:
                self.built.harness.on_interrupt(msg.epoch, by_user=msg.reason == "barge-in")
            except StoreUnwritable as exc:
                self.outage.begin(exc)

    def tick(self) -> float | None:
        if self.built is None:
            if self.outage.down and time.monotonic() >= self.retry_at:
                self._build_again()
            return IDLE_POLL_S
        if self.unresumed:
            self.start()
            if self.unresumed:
                return IDLE_POLL_S  # nothing runs before the restart's work is resumed
        if self.outage.down:
            self._requeue()  # raises nothing: while the folder refuses, the outage goes on
        try:
            self.built.harness.poll()
        except StoreUnwritable as exc:
            self.outage.begin(exc)
        self._watch()
        if self.built.harness.jobs or self.io.clock.virtual:
            return 0.05  # work runs: timeouts and wake-ups are due at fine grain (and on the virtual clock always)
        return IDLE_POLL_S  # nothing runs: a new request starts at once (accept polls), expiry can wait

    def stats(self) -> dict:
        if self.built is None:
            return {"declined": self.declined} if self.declined else {}
        return {"accepted": self.accepted, "released": self.released, "running": len(self.built.harness.jobs),
                "work": self.built.harness.counts(), **({"declined": self.declined} if self.declined else {})}

    def close(self) -> None:
        if self.built is not None:
            self.built.close()
