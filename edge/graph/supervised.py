"""One supervised node: its whole life, from spawn to kill, as a small state machine.

idle -> spawned (process or thread started; hello under `process_start_s`,
then ready under `handshake_timeout_s`) -> ready -> running (heartbeats,
or it hangs) -> exited (a restart after a backoff) or failed (given up).
The supervisor owns the sockets and the session; a child owns the rest:
when it is overdue, when it restarts, how it is stopped and killed.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable

import zmq

from edge import messages as m
from edge.graph.loader import load_class
from edge.graph.node import NodeSpec
from edge.graph.runner import NodeRunner
from edge.wire import Message

log = logging.getLogger(__name__)


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

    def hang_limit(self, inprocess: bool) -> float:
        return max(self.hang_s, self.inprocess_hang_s) if inprocess else self.hang_s


class ChildState(StrEnum):
    IDLE = "idle"  # not started yet
    SPAWNED = "spawned"  # started: waiting for its hello, then its ready
    READY = "ready"  # set up: waiting for the session to start
    RUNNING = "running"  # the session runs: heartbeats are due
    EXITED = "exited"  # gone: a restart is scheduled
    FAILED = "failed"  # given up on: the session stops


WATCHED = (ChildState.SPAWNED, ChildState.READY, ChildState.RUNNING)  # alive by contract: a death is a crash
RESTARTING = (ChildState.EXITED, ChildState.SPAWNED)  # what health calls "restarting" once the session runs
WARNING_EVENTS = ("crashed", "hung", "start-timeout", "handshake-timeout", "failed")


@dataclass(frozen=True)
class Trouble:
    """Why a child must be restarted now, and the sentence health gives for it."""

    why: str  # crashed | exited | start-timeout | handshake-timeout | hung
    sentence: str = ""
    exit_code: int | None = None


# What a child says about itself (event, detail); the supervisor journals and publishes it.
Report = Callable[["Child", str, str], None]
Send = Callable[[str, Message], None]  # a control message to the node named


@dataclass
class Child:
    name: str
    settings: SupervisorSettings
    report: Report
    send: Send
    context: zmq.Context | None = None  # in-process: the supervisor's context, shared by the node's thread
    state: ChildState = ChildState.IDLE
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
    # Direct bus: the running nodes that have not yet said they hear this node through the proxy again; its next
    # life is started once none is left (edge/graph/proxy_topics.py).
    listeners: set[str] = field(default_factory=set)

    @property
    def inprocess(self) -> bool:
        return self.context is not None

    @property
    def hang_s(self) -> float:
        return self.settings.hang_limit(self.inprocess)

    # --- start ---------------------------------------------------------------------------
    def start(self, spec: NodeSpec) -> None:
        """Spawn the node's process (or, in-process, its thread) and wait for its hello."""
        self.state, self.spawned_at, self.last_seen, self.restart_at, self.finished = \
            ChildState.SPAWNED, time.monotonic(), 0.0, None, False
        self.hello_at, self.busy_until = None, 0.0
        if self.context is not None:
            cls, context = load_class(spec.node_class), self.context

            def target() -> None:
                try:
                    NodeRunner(spec, cls, context=context).run()
                except BaseException as exc:  # reported as a crash by the supervision loop
                    self.thread_error = exc
                    log.exception("node %s raised", self.name)
            self.proc, self.thread_error = None, None
            self.thread = threading.Thread(target=target, name=f"node-{self.name}", daemon=True)
            self.thread.start()
            self.pid = os.getpid()
        else:
            self.proc = subprocess.Popen([sys.executable, "-m", "edge.graph.child", str(os.getpid())],
                                         stdin=subprocess.PIPE, text=True)
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(dataclasses.asdict(spec)))
            self.proc.stdin.close()
            self.pid = self.proc.pid
        self.report(self, "spawned", f"restart {self.restarts}" if self.restarts else "")

    def restart_due(self, now: float) -> bool:
        return self.state == ChildState.EXITED and self.restart_at is not None and now >= self.restart_at

    # --- what it says ----------------------------------------------------------------------
    def heard(self) -> None:
        self.last_seen = time.monotonic()

    def on_hello(self) -> None:
        self.hello_at = self.hello_at or time.monotonic()

    def on_ready(self, busy_s: float, setup_ms: float) -> None:
        self.state, self.busy_s = ChildState.READY, busy_s
        self.report(self, "ready", f"set-up {setup_ms:.0f} ms")

    def run(self, epoch: int, origin_ns: int) -> None:
        """The session runs: tell the node to start."""
        self.state = ChildState.RUNNING
        self.send(self.name, m.Start(epoch, origin_ns))

    def on_heartbeat(self, busy_s: float) -> None:
        self.busy_until = self.last_seen + busy_s if busy_s > 0 else 0.0

    def on_finished(self) -> None:
        self.finished = True
        self.report(self, "finished", "")

    def on_fatal(self, reason: str) -> str:
        """It cannot start (a missing device or model): given up on. Returns why the session stops."""
        self.state = ChildState.FAILED
        self.report(self, "failed", reason)
        return f"node {self.name} could not start: {reason}"

    # --- init timeout, heartbeat ---------------------------------------------------------------
    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return self.thread is not None and self.thread.is_alive()

    def hang_deadline(self) -> float:
        """When silence from this node means it hangs: the short limit, or the end of a declared long step."""
        return max(self.last_seen + max(self.hang_s, self.busy_s), self.busy_until)

    def fresh(self, now: float) -> bool:
        """Done, or running with a heartbeat inside its limit (the systemd watchdog is petted only then)."""
        return self.finished or (self.state == ChildState.RUNNING and now < self.hang_deadline())

    def trouble(self, now: float) -> Trouble | None:
        """What is wrong with a child that should be alive: dead, slow to start, or silent too long."""
        if self.state not in WATCHED or self.finished:
            return None
        s = self.settings
        if not self.alive():
            code = self.proc.returncode if self.proc is not None else repr(self.thread_error)
            return Trouble("crashed" if code else "exited", exit_code=code if code and self.proc is not None else None)
        if self.state == ChildState.SPAWNED and self.hello_at is None and now - self.spawned_at > s.process_start_s:
            return Trouble("start-timeout")
        if self.state == ChildState.SPAWNED and self.hello_at is not None and \
                now - self.hello_at > s.handshake_timeout_s:
            return Trouble("handshake-timeout")
        if self.state == ChildState.RUNNING and self.last_seen and now > self.hang_deadline():
            return Trouble("hung", f"node {self.name} hung: no heartbeat for {now - self.last_seen:.1f} s "
                                   f"(limit {max(self.hang_s, self.busy_s):.1f} s outside a declared long step), "
                                   f"so it was killed")
        return None

    def restart(self, trouble: Trouble) -> str | None:
        """Kill what is left of it, then restart it after a backoff, or give up: returns why the session stops."""
        self.kill()
        why, sentence, s = trouble.why, trouble.sentence, self.settings
        code = f"exit code {trouble.exit_code}; " if trouble.exit_code is not None else ""
        self.problem = sentence or why
        self.restarts += 1
        if self.restarts > s.max_restarts:
            self.state = ChildState.FAILED
            self.report(self, "failed", f"{code}{why}; gave up after {s.max_restarts} restarts")
            return f"node {self.name} failed: {why}"
        if self.inprocess and self.thread is not None and self.thread.is_alive():
            self.state = ChildState.FAILED  # a hung thread cannot be killed
            self.report(self, "failed", f"{code}{why}; threads cannot be restarted while hung")
            return f"node {self.name} hung in-process"
        delay = min(s.backoff_max_s, s.backoff_s * 2 ** (self.restarts - 1))
        self.state, self.restart_at = ChildState.EXITED, time.monotonic() + delay
        after = f"restart in {delay * 1000:.0f} ms"
        self.report(self, why, f"{code}{sentence}; {after}" if sentence else f"{code}{after}")
        return None

    # --- stop, kill ------------------------------------------------------------------------
    def stop(self, reason: str) -> None:
        """Ask the node to stop; `terminate` follows if it has not within the grace period."""
        self.send(self.name, m.Shutdown(reason))

    def terminate(self) -> None:
        """Still alive after the grace period: terminated, then killed."""
        self.report(self, "killed", "did not stop within the grace period")
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(1.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def close(self) -> None:
        """The session is over: its thread joined, its process gone."""
        if self.thread is not None:
            self.thread.join(timeout=2)
        self.kill()
