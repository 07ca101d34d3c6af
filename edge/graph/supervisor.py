"""The supervisor: binds the bus and the control socket, starts every node, keeps them alive.

Per node: spawn -> hello -> ready (under a handshake timeout) -> start ->
heartbeats (hang detection) -> finished. A crash or a hang is followed by a
restart with backoff; the rest of the graph goes on. At the end: a
SessionEnd marker for the recorder, shutdown, then kill after a grace period.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Mapping, Protocol

import zmq

from edge import messages as m
from edge.graph.endpoints import Endpoints, make_endpoints, remove_runtime_dir
from edge.graph.notify import SystemdNotifier
from edge.graph.node import DATA_HWM, NodeRunner, NodeSpec
from edge.graph.loader import load_class
from edge.wire import Rejects, WireError, decode, encode

log = logging.getLogger("edge.supervisor")
SUPERVISE_MS = 100  # the supervision loop wakes for control messages at once, else this often (restarts, hangs)


@dataclass
class SupervisorSettings:
    process_start_s: float = 30.0  # spawn to hello (interpreter and imports)
    handshake_timeout_s: float = 120.0  # hello to ready (model loading happens here)
    heartbeat_s: float = 0.5
    # No heartbeat for this long after ready: killed and restarted. Handlers are short, so a hang is caught
    # within 2 s; a model step declares its own longer bound around itself (NodeIO.busy).
    hang_s: float = 1.8
    # Threads share one interpreter lock and a hung one cannot be restarted (the session stops): in-process
    # sessions wait this long before calling a node hung.
    inprocess_hang_s: float = 10.0
    grace_s: float = 2.0  # shutdown to kill
    backoff_s: float = 0.05  # first restart delay; doubles per consecutive failure
    backoff_max_s: float = 5.0
    max_restarts: int = 20
    max_session_s: float | None = None
    bus: str = "direct"  # "direct": nodes also talk one hop to each other; "proxy": everything via the proxy


@dataclass
class Child:
    name: str
    state: str = "idle"  # idle | spawned | ready | running | finished | exited | failed
    proc: subprocess.Popen | None = None
    thread: threading.Thread | None = None
    thread_error: BaseException | None = None
    pid: int = 0
    spawned_at: float = 0.0
    hello_at: float | None = None
    busy_s: float = 0.0  # declared by the node at ready: its hang limit is at least this
    busy_until: float = 0.0  # a step the node declared long (NodeIO.busy) may run until then
    last_seen: float = 0.0
    problem: str = ""  # why it was last restarted, in one sentence (for health)
    restarts: int = 0
    restart_at: float | None = None
    finished: bool = False
    restore: dict = field(default_factory=dict)
    events: list[tuple[float, str]] = field(default_factory=list)

    def hang_deadline(self, hang_s: float) -> float:
        """When silence from this node means it hangs: the short limit, or the end of a declared long step."""
        return max(self.last_seen + max(hang_s, self.busy_s), self.busy_until)

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return self.thread is not None and self.thread.is_alive()


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
        self.children = {n: Child(n) for n in nodes}
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
        return max(self.settings.hang_s, self.settings.inprocess_hang_s) if self.inprocess else self.settings.hang_s

    def now_ns(self) -> int:
        return time.monotonic_ns() - self.origin_ns

    def _event(self, name: str, event: str, detail: str = "") -> None:
        c = self.children[name]
        self.events.append({"t_s": round(self.now_ns() / 1e9, 3), "node": name, "event": event, "detail": detail})
        level = logging.WARNING if event in ("crashed", "hung", "start-timeout", "handshake-timeout", "failed") \
            else logging.INFO
        log.log(level, "node %s %s %s", name, event, detail)
        self._publish(m.NodeEvent(name, event, detail, c.pid, c.restarts))

    # --- children ------------------------------------------------------------------------
    def _spec(self, c: Child) -> NodeSpec:
        return NodeSpec(name=c.name, config=self.configs.get(c.name, {}), endpoints=self.ep.as_dict(),
                        clock_origin_ns=self.origin_ns, virtual_clock=self.virtual_clock,
                        restarts=c.restarts, restore=c.restore, heartbeat_s=self.settings.heartbeat_s,
                        start_timeout_s=self.settings.handshake_timeout_s + 30,
                        node_class=self.node_classes[c.name], peers=list(self.children))

    def _spawn(self, c: Child) -> None:
        spec = self._spec(c)
        c.state, c.spawned_at, c.last_seen, c.restart_at, c.finished = "spawned", time.monotonic(), 0.0, None, False
        c.hello_at, c.busy_until = None, 0.0
        if self.inprocess:
            cls = load_class(spec.node_class)

            def target() -> None:
                try:
                    NodeRunner(spec, cls, context=self.ctx).run()
                except BaseException as exc:  # reported as a crash by the supervision loop
                    c.thread_error = exc
                    log.exception("node %s raised", c.name)
            c.proc, c.thread_error = None, None
            c.thread = threading.Thread(target=target, name=f"node-{c.name}", daemon=True)
            c.thread.start()
            c.pid = os.getpid()
        else:
            c.proc = subprocess.Popen([sys.executable, "-m", "edge.graph.child", str(os.getpid())],
                                      stdin=subprocess.PIPE, text=True)
            assert c.proc.stdin is not None
            c.proc.stdin.write(json.dumps(dataclasses.asdict(spec)))
            c.proc.stdin.close()
            c.pid = c.proc.pid
        self._event(c.name, "spawned", f"restart {c.restarts}" if c.restarts else "")

    def _kill(self, c: Child) -> None:
        if c.proc is not None and c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(timeout=5)

    def _schedule_restart(self, c: Child, why: str, sentence: str = "") -> None:
        self._kill(c)
        c.problem = sentence or why
        c.restarts += 1
        if c.restarts > self.settings.max_restarts:
            c.state = "failed"
            self._event(c.name, "failed", f"{why}; gave up after {self.settings.max_restarts} restarts")
            self._stop_reason = self._stop_reason or f"node {c.name} failed: {why}"
            return
        if self.inprocess and c.thread is not None and c.thread.is_alive():
            c.state = "failed"  # a hung thread cannot be killed
            self._event(c.name, "failed", f"{why}; threads cannot be restarted while hung")
            self._stop_reason = self._stop_reason or f"node {c.name} hung in-process"
            return
        delay = min(self.settings.backoff_max_s, self.settings.backoff_s * 2 ** (c.restarts - 1))
        c.state, c.restart_at = "exited", time.monotonic() + delay
        self._event(c.name, why, f"{sentence}; restart in {delay * 1000:.0f} ms" if sentence
                    else f"restart in {delay * 1000:.0f} ms")

    def _check_children(self) -> None:
        now = time.monotonic()
        for c in self.children.values():
            if c.state == "exited" and c.restart_at is not None and now >= c.restart_at:
                self._spawn(c)
            elif c.state in ("spawned", "ready", "running") and not c.finished:
                if not c.alive():
                    code = c.proc.returncode if c.proc is not None else repr(c.thread_error)
                    self._schedule_restart(c, "crashed" if code else "exited")
                    if code and c.proc is not None:
                        self.events[-1]["detail"] = f"exit code {code}; " + self.events[-1]["detail"]
                elif c.state == "spawned" and c.hello_at is None and \
                        now - c.spawned_at > self.settings.process_start_s:
                    self._schedule_restart(c, "start-timeout")
                elif c.state == "spawned" and c.hello_at is not None and \
                        now - c.hello_at > self.settings.handshake_timeout_s:
                    self._schedule_restart(c, "handshake-timeout")
                elif c.state == "running" and c.last_seen and now > c.hang_deadline(self.hang_s):
                    quiet = now - c.last_seen
                    self._schedule_restart(c, "hung", f"node {c.name} hung: no heartbeat for {quiet:.1f} s "
                                                      f"(limit {max(self.hang_s, c.busy_s):.1f} s "
                                                      f"outside a declared long step), so it was killed")

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
        c.last_seen = time.monotonic()
        msg = env.msg
        if isinstance(msg, m.Hello):
            c.hello_at = c.hello_at or time.monotonic()
        elif isinstance(msg, m.Ready):
            c.state, c.busy_s = "ready", msg.busy_s
            self._event(c.name, "ready", f"set-up {msg.setup_ms:.0f} ms")
            if self.started:
                c.state = "running"
                self._send(c.name, m.Start(self.epoch, self.origin_ns))
        elif isinstance(msg, m.Finished):
            c.finished = True
            self._event(c.name, "finished")
        elif isinstance(msg, m.Fatal):
            c.state = "failed"
            self._event(c.name, "failed", msg.reason)
            self._stop_reason = self._stop_reason or f"node {c.name} could not start: {msg.reason}"
        elif isinstance(msg, m.Checkpoint):
            c.restore = msg.state
        elif isinstance(msg, m.Heartbeat):
            if msg.stats:
                self.node_stats[c.name] = msg.stats
            c.busy_until = c.last_seen + msg.busy_s if msg.busy_s > 0 else 0.0
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
                self._spawn(c)
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
            self._watchdog()
            if not self.started and all(c.state == "ready" for c in self.children.values()):
                self.started = True
                self.origin_ns = time.monotonic_ns()  # session time 0: every node is ready
                for c in self.children.values():
                    c.state = "running"
                    self._send(c.name, m.Start(self.epoch, self.origin_ns))
                self._event(next(iter(self.children)), "session-started")
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
        fresh = all(c.finished or (c.state == "running" and now < c.hang_deadline(self.hang_s))
                    for c in self.children.values() if c.state != "failed")
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
            self._send(c.name, m.Shutdown(reason))
        deadline = time.monotonic() + self.settings.grace_s
        while any(c.alive() for c in self.children.values()) and time.monotonic() < deadline:
            time.sleep(0.02)
        for c in self.children.values():
            if c.alive():
                self._event(c.name, "killed", "did not stop within the grace period")
                if c.proc is not None:
                    c.proc.terminate()
                    try:
                        c.proc.wait(1.0)
                    except subprocess.TimeoutExpired:
                        c.proc.kill()
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
            if c.thread is not None:
                c.thread.join(timeout=2)
            self._kill(c)
        self.ctx.destroy(linger=0)
        self.notifier.close()
        remove_runtime_dir(self.ep)
