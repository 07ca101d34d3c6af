"""The supervisor: binds the bus and the control socket, starts every node, keeps them alive.

Per node: spawn -> hello -> ready (under a handshake timeout) -> start ->
heartbeats (hang detection) -> finished. A crash or a hang is followed by a
restart with backoff; the rest of the graph goes on. At the end: a
SessionEnd marker for the recorder, shutdown, then kill after a grace period.
"""
from __future__ import annotations

import logging
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Mapping, Protocol

import zmq

from edge import messages as m
from edge.graph.endpoints import Endpoints, make_endpoints, remove_runtime_dir
from edge.graph.notify import SystemdNotifier
from edge.graph.node import DATA_HWM, NodeSpec
from edge.graph.supervised import WARNING_EVENTS, Child, ChildState, SupervisorSettings
from edge.wire import Rejects, WireError, decode, encode

__all__ = ["SessionReport", "Supervisor", "SupervisorSettings", "Watcher"]
log = logging.getLogger(__name__)
SUPERVISE_MS = 100  # the supervision loop wakes for control messages at once, else this often (restarts, hangs)


@dataclass
class SessionReport:
    ok: bool
    reason: str
    duration_s: float
    restarts: dict[str, int]
    events: list[dict]
    rejected: dict[str, int]
    node_stats: dict[str, dict] = field(default_factory=dict)  # each node's last heartbeat counters


class Watcher(Protocol):
    """Something that watches a running session from the supervisor's process (the HTTP observer)."""

    def attach(self, supervisor: "Supervisor") -> None:
        """The bus is bound: subscribe to it (with the supervisor's context) and read its state from now on."""

    def detach(self) -> None:
        """The session is over and the sockets are about to close: stop using them."""


class Supervisor:
    def __init__(self, configs: Mapping[str, dict], nodes: dict[str, str], *, required: tuple[str, ...] = (),
                 inprocess: bool = False, virtual_clock: bool = False,
                 settings: SupervisorSettings | None = None, transport: str | None = None,
                 watcher: Watcher | None = None) -> None:
        """`nodes` maps each node's name to the "module:Class" that runs it, `configs` to its settings as plain
        values; the session owns both. A file session ends when every node named in `required` has finished."""
        self.node_classes = dict(nodes)
        self.configs = dict(configs)
        self.inprocess = inprocess
        self.virtual_clock = virtual_clock
        self.settings = settings or SupervisorSettings()
        self.ctx = zmq.Context()
        self.ep: Endpoints = make_endpoints(transport or ("inproc" if inprocess else "ipc"), bus=self.settings.bus)
        shared = self.ctx if inprocess else None
        self.children = {n: Child(n, self.settings, self._event, self._send, shared) for n in nodes}
        self.required = [n for n in required if n in self.children]
        self.origin_ns = time.monotonic_ns()
        self.rejects = Rejects("supervisor")
        self.epoch = 0
        self.started = False
        self._stop_reason: str | None = None
        self.events: list[dict] = []
        self.node_stats: dict[str, dict] = {}
        self.notifier = SystemdNotifier()
        self._next_watchdog = 0.0
        self.watcher = watcher
        self.typed: queue.SimpleQueue[str] = queue.SimpleQueue()  # typed text waiting for the loop to send it
        self.finished_reason: str | None = None  # set once the session has ended

    # --- sockets -------------------------------------------------------------------------
    def _bind(self) -> None:
        self.xsub = self.ctx.socket(zmq.XSUB)
        self.xpub = self.ctx.socket(zmq.XPUB)
        for s in (self.xsub, self.xpub):
            s.setsockopt(zmq.SNDHWM, DATA_HWM)
            s.setsockopt(zmq.RCVHWM, DATA_HWM)
            s.setsockopt(zmq.LINGER, 0)
        self.xsub.bind(self.ep.bus_in)
        self.xpub.bind(self.ep.bus_out)
        self.ctl = self.ctx.socket(zmq.ROUTER)
        self.ctl.setsockopt(zmq.LINGER, 0)
        self.ctl.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a restarted node reuses its identity
        self.ctl.bind(self.ep.control)
        self._proxy_ctl = self.ctx.socket(zmq.PAIR)
        self._proxy_ctl.bind(f"inproc://proxy-ctl-{id(self)}")
        steer = self.ctx.socket(zmq.PAIR)
        steer.connect(f"inproc://proxy-ctl-{id(self)}")
        self._proxy = threading.Thread(target=zmq.proxy_steerable, args=(self.xsub, self.xpub, None, steer),
                                       name="bus-proxy", daemon=True)
        self._proxy.start()
        self.pub = self.ctx.socket(zmq.PUB)  # the supervisor's own voice on the bus (node events)
        self.pub.setsockopt(zmq.LINGER, 500)
        self.pub.connect(self.ep.bus_in)
        self._seq = 0

    def type_text(self, text: str) -> None:
        """Text typed during the session (from another thread, e.g. the `--http` page): put on the bus as
        `TypedText` by the supervising loop, which owns the bus socket."""
        self.typed.put(text)

    def _publish(self, msg: m.Message, topic: str | None = None) -> None:
        self._seq += 1
        self.pub.send_multipart(encode(msg, seq=self._seq, epoch=self.epoch, t_ns=self.now_ns(),
                                       src="supervisor", topic=topic))

    def _send(self, name: str, msg: m.Message) -> None:
        self._seq += 1
        frames = encode(msg, seq=self._seq, epoch=self.epoch, t_ns=self.now_ns(), src="supervisor")
        try:
            self.ctl.send_multipart([name.encode(), *frames], flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # that node is gone; it will be restarted or is being stopped

    @property
    def hang_s(self) -> float:
        return self.settings.hang_limit(self.inprocess)

    def now_ns(self) -> int:
        return time.monotonic_ns() - self.origin_ns

    def _event(self, c: Child, event: str, detail: str = "") -> None:
        """What happened to a child: in the report, the log and on the bus (for the journal and the observer)."""
        self.events.append({"t_s": round(self.now_ns() / 1e9, 3), "node": c.name, "event": event, "detail": detail})
        log.log(logging.WARNING if event in WARNING_EVENTS else logging.INFO, "node %s %s %s", c.name, event, detail)
        self._publish(m.NodeEvent(c.name, event, detail, c.pid, c.restarts))

    # --- children ------------------------------------------------------------------------
    def _spec(self, c: Child) -> NodeSpec:
        return NodeSpec(name=c.name, config=self.configs.get(c.name, {}), endpoints=self.ep.as_dict(),
                        clock_origin_ns=self.origin_ns, virtual_clock=self.virtual_clock,
                        restarts=c.restarts, restore=c.restore, heartbeat_s=self.settings.heartbeat_s,
                        start_timeout_s=self.settings.handshake_timeout_s + 30,
                        node_class=self.node_classes[c.name], peers=list(self.children))

    def _check_children(self) -> None:
        now = time.monotonic()
        for c in self.children.values():
            if c.restart_due(now):
                c.start(self._spec(c))
            elif (trouble := c.trouble(now)) is not None:
                stop = c.restart(trouble)
                self._stop_reason = self._stop_reason or stop
                if stop is None:
                    self._life_ended(c)

    def _life_ended(self, c: Child) -> None:
        """Every running node re-sends what `c` held and (direct bus) takes `c`'s topics back on the proxy, before
        its next life starts."""
        c.listeners = {n for n, o in self.children.items() if n != c.name and o.state == ChildState.RUNNING}
        for n in c.listeners:
            self._send(n, m.LifeEnded(c.name))

    def _start_ready(self) -> None:
        """Start each restarted node that is ready, once no running node still has to hear it via the proxy."""
        for c in self.children.values():
            if c.state != ChildState.READY:
                continue
            c.listeners = {n for n in c.listeners
                           if self.children[n].state == ChildState.RUNNING and self.children[n].alive()}
            if not c.listeners:
                c.run(self.epoch, self.origin_ns)

    # --- control ------------------------------------------------------------------------
    def _on_control(self, frames: list[bytes]) -> None:
        ident = frames[0].decode(errors="replace")
        try:
            env = decode(frames[1:])
        except WireError as err:
            self.rejects.add(err)
            return
        c = self.children.get(ident)
        if c is None:
            return
        c.heard()
        msg = env.msg
        if isinstance(msg, m.Hello):
            c.on_hello()
        elif isinstance(msg, m.Ready):
            c.on_ready(msg.busy_s, msg.setup_ms)  # started by _start_ready once the session runs
        elif isinstance(msg, m.ProxyAgain):
            if msg.peer in self.children:
                self.children[msg.peer].listeners.discard(ident)
        elif isinstance(msg, m.Finished):
            c.on_finished()
        elif isinstance(msg, m.Fatal):
            self._stop_reason = self._stop_reason or c.on_fatal(msg.reason)
        elif isinstance(msg, m.Checkpoint):
            c.restore = msg.state
        elif isinstance(msg, m.Heartbeat):
            if msg.stats:
                self.node_stats[c.name] = msg.stats
            c.on_heartbeat(msg.busy_s)
        elif isinstance(msg, m.Interrupt):
            if msg.epoch > self.epoch:
                self.epoch = msg.epoch
                for other in self.children:
                    if other != ident:
                        self._send(other, msg)
                self._publish(msg, topic="sys.interrupt")  # for the timeline

    # --- session ------------------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        self._stop_reason = reason

    def run(self) -> SessionReport:
        self._bind()
        if self.watcher is not None:
            self.watcher.attach(self)
        switch = sys.getswitchinterval()
        if self.inprocess:
            sys.setswitchinterval(0.0005)  # node threads share the GIL: hand it over promptly (default 5 ms)
        t0 = time.monotonic()
        old = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old[sig] = signal.signal(sig, lambda *_: self.request_stop("interrupted by signal"))
        try:
            # The recorder first, so it sees every node event.
            order = sorted(self.children.values(), key=lambda c: c.name != "recorder")
            for c in order:
                c.start(self._spec(c))
            reason = self._supervise(t0)
            self.finished_reason = reason
            ok = self._finish(reason)
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
            sys.setswitchinterval(switch)
            self._close()
        return SessionReport(ok and not reason.startswith("node "), reason, time.monotonic() - t0,
                             {n: c.restarts for n, c in self.children.items()}, self.events,
                             self.rejects.as_dict(), self.node_stats)

    def _supervise(self, t0: float) -> str:
        while True:
            if self.ctl.poll(SUPERVISE_MS):
                while self.ctl.poll(0):
                    self._on_control(self.ctl.recv_multipart())
            self._check_children()
            if self.started:
                self._start_ready()
            self._watchdog()
            while self.started and not self.typed.empty():
                self._publish(m.TypedText(self.typed.get()))
            if not self.started and all(c.state == ChildState.READY for c in self.children.values()):
                self.started = True
                self.origin_ns = time.monotonic_ns()  # session time 0: every node is ready
                for c in self.children.values():
                    c.run(self.epoch, self.origin_ns)
                self._event(next(iter(self.children.values())), "session-started")
                self.notifier.notify("READY=1\nSTATUS=session running")
            if self._stop_reason:
                return self._stop_reason
            if self.required and all(self.children[n].finished for n in self.required):
                return "complete"
            limit = self.settings.max_session_s
            if limit is not None and time.monotonic() - t0 > limit:
                return f"stopped after the {limit:.0f} s session limit"

    def _watchdog(self) -> None:
        """Pet systemd's watchdog only while every running node has a fresh heartbeat: a hung graph is restarted."""
        now = time.monotonic()
        if not self.started or now < self._next_watchdog:
            return
        self._next_watchdog = now + 1.0
        fresh = all(c.fresh(now) for c in self.children.values() if c.state != ChildState.FAILED)
        if fresh:
            self.notifier.notify("WATCHDOG=1")

    def _finish(self, reason: str) -> bool:
        self.notifier.notify(f"STOPPING=1\nSTATUS={reason}")
        time.sleep(0.2)  # let the last data messages clear the proxy before the end marker
        self._publish(m.SessionEnd(reason))
        rec = self.children.get("recorder")
        deadline = time.monotonic() + 5.0
        while rec is not None and not rec.finished and rec.alive() and time.monotonic() < deadline:
            if self.ctl.poll(20):
                self._on_control(self.ctl.recv_multipart())
            if not rec.finished:
                self._publish(m.SessionEnd(reason))
                time.sleep(0.05)
        for c in self.children.values():
            c.stop(reason)
        deadline = time.monotonic() + self.settings.grace_s
        while any(c.alive() for c in self.children.values()) and time.monotonic() < deadline:
            time.sleep(0.02)
        for c in self.children.values():
            if c.alive():
                c.terminate()
        return reason == "complete"

    def _close(self) -> None:
        if self.watcher is not None:
            self.watcher.detach()
        try:
            self._proxy_ctl.send(b"TERMINATE")
            self._proxy.join(timeout=2)
        except Exception:
            pass
        for c in self.children.values():
            c.close()
        self.ctx.destroy(linger=0)
        self.notifier.close()
        remove_runtime_dir(self.ep)
