"""The session clock: every node reads time only through a `Clock`.

Time is nanoseconds since session start. CLOCK_MONOTONIC is system-wide on
Linux, so processes given the same origin share one timeline.
"""
from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now_ns(self) -> int: ...
    def sleep_until(self, t_ns: int) -> None: ...
    @property
    def virtual(self) -> bool: ...


class MonotonicClock:
    """Real time since `origin_ns` (a `time.monotonic_ns()` reading)."""

    virtual = False

    def __init__(self, origin_ns: int | None = None) -> None:
        self.origin_ns = time.monotonic_ns() if origin_ns is None else origin_ns

    def now_ns(self) -> int:
        return time.monotonic_ns() - self.origin_ns

    def sleep_until(self, t_ns: int) -> None:
        delay = (t_ns - self.now_ns()) / 1e9
        if delay > 0:
            time.sleep(delay)


class VirtualClock:
    """Time that moves only when told: by `advance_to`, or by sleeping.

    Used by tests, replay and 'as fast as possible' file sessions, where
    message timestamps (stamped once at capture) drive the clock.
    """

    virtual = True

    def __init__(self, start_ns: int = 0) -> None:
        self._t = start_ns
        self._lock = threading.Lock()

    def now_ns(self) -> int:
        return self._t

    def advance_to(self, t_ns: int) -> None:
        with self._lock:
            if t_ns > self._t:
                self._t = t_ns

    def advance(self, dt_ns: int) -> None:
        with self._lock:
            self._t += max(0, dt_ns)

    def sleep_until(self, t_ns: int) -> None:
        self.advance_to(t_ns)
