"""Waiting in real time for something another thread or process does, with the sentence to fail with."""
from __future__ import annotations

import time
from typing import Callable


def until(cond: Callable[[], object], what: str, wait_s: float = 20.0, step_s: float = 0.05) -> None:
    """Return once `cond()` is true; fail with `what` after `wait_s` seconds."""
    deadline = time.monotonic() + wait_s
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(step_s)
