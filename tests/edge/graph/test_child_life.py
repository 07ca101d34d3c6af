"""A supervised child's life, without a session: overdue starts, hangs and crashes become restarts, then failure."""
from __future__ import annotations

import subprocess
import time

from edge.graph.supervised import Child, ChildState, SupervisorSettings


def _child(settings: SupervisorSettings, said: list) -> Child:
    c = Child("capture", settings, lambda ch, event, detail: said.append((event, detail)),
              lambda name, msg: said.append((name, type(msg).__name__)))
    c.proc = subprocess.Popen(["sleep", "30"])
    c.state, c.spawned_at = ChildState.SPAWNED, time.monotonic()
    return c


def test_a_silent_start_is_restarted_with_backoff_then_given_up() -> None:
    said: list = []
    c = _child(SupervisorSettings(process_start_s=0.0, max_restarts=1, backoff_s=0.05), said)
    trouble = c.trouble(time.monotonic() + 0.01)
    assert trouble is not None and trouble.why == "start-timeout"
    assert c.restart(trouble) is None  # the first time: restarted after the backoff
    assert c.state == ChildState.EXITED and not c.alive()  # killed
    assert said[-1] == ("start-timeout", "restart in 50 ms")
    assert not c.restart_due(time.monotonic()) and c.restart_due(time.monotonic() + 0.06)
    assert c.restart(trouble) == "node capture failed: start-timeout"  # past max_restarts: the session stops
    assert c.state == ChildState.FAILED and said[-1][0] == "failed"


def test_a_running_child_that_stops_beating_hangs_unless_it_declared_a_long_step() -> None:
    said: list = []
    c = _child(SupervisorSettings(hang_s=1.0), said)
    c.on_hello()
    c.on_ready(0.0, 12.0)
    c.run(0, 0)
    assert said[-2:] == [("ready", "set-up 12 ms"), ("capture", "Start")]
    c.heard()
    c.on_heartbeat(5.0)  # a model step of up to 5 s
    assert c.trouble(time.monotonic() + 2.0) is None
    trouble = c.trouble(time.monotonic() + 6.0)
    assert trouble is not None and trouble.why == "hung" and "no heartbeat for" in trouble.sentence
    c.kill()


def test_a_crash_names_the_exit_code() -> None:
    said: list = []
    c = _child(SupervisorSettings(), said)
    c.proc.kill()
    c.proc.wait()
    trouble = c.trouble(time.monotonic())
    assert trouble is not None and trouble.why == "crashed" and trouble.exit_code == -9
    c.restart(trouble)
    assert said[-1] == ("crashed", "exit code -9; restart in 50 ms")
