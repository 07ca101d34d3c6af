"""The observer: a subscriber on the bus inside the supervisor's process, and what it has seen so far.

It is the supervisor's watcher: attached once the bus is bound, it opens one SUB socket with the
supervisor's context (so in-process sessions work too) and reads the dialogue, harness and node-event
topics on its own thread. Heartbeat counters and node states are read from the supervisor when asked.
Everything here is counted under one lock; the HTTP threads only read.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import zmq

from edge import messages as m
from edge.messages import work_states as W
from edge.graph.supervised import RESTARTING, ChildState
from edge.observe.histogram import RATIO, Histogram
from edge.wire import Envelope, WireError, decode

if TYPE_CHECKING:
    from edge.graph.supervisor import Supervisor

log = logging.getLogger(__name__)

# Prefixes of the bus topics the observer needs; audio, frames and playback references stay unread.
TOPICS = ("dlg.", "hrn.", "sys.node", "sys.interrupt", "sys.end", "media.activity")
MAX_TYPED = 2000  # characters of one typed message
TIMELINE_KEEP = 20_000  # page events kept for a browser that connects late (about an hour of activity)


class Observer:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.sup: Supervisor | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.ended: str | None = None
        self.session_started = False  # supervisor events before it carry the start-up clock: shown at 0
        # Chunk loop
        self.chunks: collections.Counter[str] = collections.Counter()
        self.decision_s = Histogram()
        self.receive_delay_s = Histogram()
        self.rtf = Histogram(RATIO)
        self.last_rtf = 0.0
        self.overruns = 0
        # Speech
        self.first_audio_s = Histogram()
        self.speak_sent: dict[str, tuple[int, int]] = {}  # SpeakText id -> (stamp, epoch), until its last piece
        self.pieces = 0
        self.played_s = 0.0
        self.underruns = 0
        self.ducks: collections.Counter[str] = collections.Counter()
        self.restores = 0
        self.epoch = 0
        # Duplex
        self.barge_in: collections.Counter[str] = collections.Counter()
        self.interrupts = 0
        self.onsets: collections.Counter[str] = collections.Counter()
        # Harness
        self.work_state: dict[str, str] = {}
        self.work_entered: dict[str, int] = {}
        self.transitions: collections.Counter[str] = collections.Counter()
        self.retries = 0
        self.expirations = 0
        self.run_s = Histogram()
        self.bus_seen: collections.Counter[str] = collections.Counter()
        self.bus_rejected: collections.Counter[str] = collections.Counter()
        self._reliable_seen: set[str] = set()  # re-sent copies of reliable messages count once
        self._reliable_order: collections.deque[str] = collections.deque()
        # The page's timeline: (sequence number, event), the newest last.
        self.timeline: collections.deque[tuple[int, dict]] = collections.deque(maxlen=TIMELINE_KEEP)
        self.seq = 0

    # --- the supervisor's watcher hook ------------------------------------------------------------
    def type_text(self, text: str) -> str | None:
        """Hands typed text to the session for its model; one sentence when it cannot be taken, else None."""
        text = text.strip()
        if not text:
            return "nothing was typed"
        if len(text) > MAX_TYPED:
            return f"typed text is at most {MAX_TYPED} characters, not {len(text)}"
        if self.sup is None or self.ended:
            return "the session is not running"
        self.sup.type_text(text)
        return None

    def attach(self, supervisor: "Supervisor") -> None:
        self.sup = supervisor
        self._stop.clear()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._listen, args=(supervisor, ready), name="observe-bus",
                                        daemon=True)
        self._thread.start()
        ready.wait(5.0)  # subscribed before the first node starts, so no node event is missed

    def detach(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        with self.lock:
            if self.sup is not None and self.ended is None:
                self.ended = self.sup.finished_reason or "stopped"
            self.changed.notify_all()

    def _listen(self, sup: "Supervisor", ready: threading.Event) -> None:
        sub = sup.ctx.socket(zmq.SUB)
        try:
            sub.setsockopt(zmq.LINGER, 0)
            sub.setsockopt(zmq.RCVHWM, 100_000)
            sub.connect(sup.ep.bus_out)
            for t in TOPICS:
                sub.setsockopt(zmq.SUBSCRIBE, t.encode())
            ready.set()
            while not self._stop.is_set():
                if not sub.poll(100):
                    continue
                while sub.poll(0):
                    frames = sub.recv_multipart()
                    try:
                        env = decode(frames)
                    except WireError as err:
                        with self.lock:
                            self.bus_rejected[err.reason] += 1
                        continue
                    self.on_envelope(env)
        except zmq.ZMQError as exc:  # the context went away under us: the session is over
            log.debug("observer stopped reading the bus: %s", exc)
        finally:
            ready.set()
            sub.close()

    # --- what crosses the bus ---------------------------------------------------------------------
    def on_envelope(self, env: Envelope) -> None:
        msg = env.msg
        with self.lock:
            if msg.RELIABLE:
                key = f"{msg.TYPE}:{msg.id}"  # type: ignore[attr-defined]
                if key in self._reliable_seen:
                    return
                self._reliable_seen.add(key)
                self._reliable_order.append(key)
                if len(self._reliable_order) > 50_000:
                    self._reliable_seen.discard(self._reliable_order.popleft())
            self.bus_seen[msg.TYPE] += 1
            handler = getattr(self, f"_on_{msg.TYPE}", None)
            if handler is not None:
                handler(env, msg)
            self.changed.notify_all()

    def _page(self, t_ns: int, kind: str, **fields: Any) -> None:
        self.seq += 1
        self.timeline.append((self.seq, {"seq": self.seq, "t": round(t_ns / 1e9, 3), "kind": kind, **fields}))

    def _on_chunk_decision(self, env: Envelope, msg: m.ChunkDecision) -> None:
        self.chunks[msg.control] += 1
        self.decision_s.observe(msg.compute_ns / 1e9)
        self.receive_delay_s.observe(msg.recv_delay_ns / 1e9)
        self.rtf.observe(msg.rtf)
        self.last_rtf = msg.rtf
        if msg.rtf > 1.0:
            self.overruns += 1
        barge = msg.info.get("barge_in") if isinstance(msg.info, dict) else None
        decision = barge.get("decision", "") if isinstance(barge, dict) else ""
        if decision:
            self.barge_in[str(decision)] += 1
        self._page(env.t_ns, "chunk", index=msg.index, control=msg.control, text=msg.text, heard=msg.user_text,
                   interrupt=msg.interrupt, delegates=msg.delegates, barge_in=decision, rtf=round(msg.rtf, 4))

    def _on_speak_text(self, env: Envelope, msg: m.SpeakText) -> None:
        if msg.id not in self.speak_sent:
            self.speak_sent[msg.id] = (env.t_ns, msg.epoch)

    def _on_playback_ack(self, env: Envelope, msg: m.PlaybackAck) -> None:
        sent = self.speak_sent.get(msg.speak_id)
        if sent is None:
            return  # a re-sent copy of a piece already counted
        if msg.seq == 0:
            self.first_audio_s.observe(max(0, msg.t_start_ns - sent[0]) / 1e9)
        self.pieces += 1
        self.played_s += max(0, msg.t_end_ns - msg.t_start_ns) / 1e9
        if msg.last:
            del self.speak_sent[msg.speak_id]

    def _on_playback_state(self, env: Envelope, msg: m.PlaybackState) -> None:
        # Playback stopped while words of the current epoch still wait to be played: the voice fell behind.
        if not msg.active and any(epoch >= self.epoch for _, epoch in self.speak_sent.values()):
            self.underruns += 1

    def _on_duck(self, env: Envelope, msg: m.Duck) -> None:
        if msg.gain < 1.0:
            self.ducks[env.src] += 1
        else:
            self.restores += 1
        self._page(env.t_ns, "duck", by=env.src, gain=msg.gain, reason=msg.reason)

    def _on_interrupt(self, env: Envelope, msg: m.Interrupt) -> None:
        self.interrupts += 1
        self.epoch = max(self.epoch, msg.epoch)
        self.speak_sent = {k: v for k, v in self.speak_sent.items() if v[1] >= self.epoch}
        self._page(msg.t_ns or env.t_ns, "interrupt", reason=msg.reason, epoch=msg.epoch)

    def _on_speech_activity(self, env: Envelope, msg: m.SpeechActivity) -> None:
        if msg.kind == "onset":
            self.onsets["over_playback" if msg.playback else "quiet"] += 1

    def _on_delegate_request(self, env: Envelope, msg: m.DelegateRequest) -> None:
        self._page(env.t_ns, "work", work_id=msg.id, state="captured", detail=msg.instruction)

    def _on_work_event(self, env: Envelope, msg: m.WorkEvent) -> None:
        old = self.work_state.get(msg.work_id)
        if old == W.RUNNING and msg.work_id in self.work_entered:
            self.run_s.observe(max(0, env.t_ns - self.work_entered[msg.work_id]) / 1e9)
        self.work_state[msg.work_id] = msg.state
        self.work_entered[msg.work_id] = env.t_ns
        self.transitions[msg.state] += 1
        attempts = msg.info.get("attempts", 0) if isinstance(msg.info, dict) else 0
        if msg.state == W.RUNNING and isinstance(attempts, int) and attempts > 1:
            self.retries += 1
        if msg.detail == "expired":
            self.expirations += 1
        self._page(env.t_ns, "work", work_id=msg.work_id, state=msg.state, detail=msg.detail)

    def _on_backend_result(self, env: Envelope, msg: m.BackendResult) -> None:
        self._page(env.t_ns, "work", work_id=msg.work_id, state=f"{msg.kind} ready", detail=msg.text)

    def _on_node_event(self, env: Envelope, msg: m.NodeEvent) -> None:
        self.session_started = self.session_started or msg.event == "session-started"
        self._page(env.t_ns if self.session_started else 0, "node", node=msg.node,
                   event=msg.event, detail=msg.detail, restarts=msg.restarts)

    def _on_session_end(self, env: Envelope, msg: m.SessionEnd) -> None:
        if self.ended is None:
            self.ended = msg.reason or "ended"
            self._page(env.t_ns, "end", reason=self.ended)

    # --- readers (HTTP threads) -------------------------------------------------------------------
    def events_after(self, seq: int, wait_s: float) -> tuple[list[dict], bool]:
        """Timeline events newer than `seq` (waiting up to wait_s for one), and whether the session has ended."""
        with self.changed:
            if not self.timeline or self.timeline[-1][0] <= seq:
                if self.ended is None:
                    self.changed.wait(wait_s)
            return [e for s, e in self.timeline if s > seq], self.ended is not None

    def health(self) -> tuple[str, str]:
        """(starting | ready | degraded | ended, the reason in one sentence)."""
        sup = self.sup
        if self.ended is not None:
            return "ended", f"the session ended: {self.ended}"
        if sup is None:
            return "starting", "the graph is being built"
        children = list(sup.children.values())
        if not sup.started:
            waiting = [c.name for c in children if c.state != ChildState.READY]
            return "starting", f"waiting for {', '.join(waiting)} to load" if waiting else "starting the session"
        failed = [c.name for c in children if c.state == ChildState.FAILED]
        if failed:
            return "degraded", f"node {failed[0]} failed and will not be restarted"
        restarting = [c for c in children if c.state in RESTARTING]
        if restarting:
            c = restarting[0]
            why = f" after: {c.problem}" if c.problem else ""
            return "degraded", f"node {c.name} is restarting (restart {c.restarts}){why}"
        now = time.monotonic()
        limit = sup.hang_s / 2
        silent = [c for c in children if c.state == ChildState.RUNNING and not c.finished and c.last_seen
                  and now - c.last_seen > limit and now > c.busy_until]
        if silent:
            c = silent[0]
            return "degraded", f"node {c.name} has not sent a heartbeat for {now - c.last_seen:.1f} s"
        return "ready", "every node is running"
