"""A supervised session run on a thread while the test kills one of its nodes with SIGKILL at a chosen moment."""
from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def run_in_background(sup: Any) -> tuple[threading.Thread, dict]:
    """The session on a thread; its report lands in the dict under "r"."""
    report: dict = {}
    runner = threading.Thread(target=lambda: report.setdefault("r", sup.run()), daemon=True)
    runner.start()
    return runner, report


def kill_once(sup: Any, node: str, moment: Callable[[], T | None], never: str, wait_s: float, join_s: float,
              pause_s: float = 0.0) -> tuple[Any, T]:
    """Run the session; once `moment()` gives something, wait `pause_s` and kill -9 `node`'s process. Returns the
    session's report, checked to have ended well with `node` restarted exactly once, and what `moment` gave."""
    runner, report = run_in_background(sup)
    deadline = time.monotonic() + wait_s
    seen = moment()
    while not seen and runner.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
        seen = moment()
    assert seen, never
    time.sleep(pause_s)
    os.kill(sup.children[node].pid, signal.SIGKILL)
    runner.join(join_s)
    assert not runner.is_alive(), f"the session did not end within {join_s} s of the kill"
    r = report["r"]
    assert r.ok, r.reason
    assert r.restarts[node] == 1, r.restarts
    return r, seen
