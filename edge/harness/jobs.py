"""Running work: one thread per task, waits on the session clock, and a count of busy workers.

Tasks wait through `Sleepers`, so on a virtual clock a task that "takes 5 s"
wakes when the session clock passes that point; `settle()` lets a test wait
until every task has either finished or is waiting on the clock.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from edge.clock import Clock


@dataclass
class Job:
    work_id: str
    attempt: int
    deadline_ns: int
    cancel_event: threading.Event = field(default_factory=threading.Event)
    on_cancel: list[Any] = field(default_factory=list)
    capability: str = ""
    thread: threading.Thread | None = None

    def cancel(self) -> None:
        self.cancel_event.set()
        for fn in list(self.on_cancel):
            try:
                fn()
            except Exception:  # noqa: BLE001  (a process that already ended, a finished future)
                pass


class Sleepers:
    """Workers waiting on the session clock; `busy` counts workers that are neither done nor waiting."""

    def __init__(self, clock: Clock, lock: threading.RLock) -> None:
        self.clock = clock
        self.cond = threading.Condition(lock)
        self.waiting: list[tuple[int, threading.Event, Job]] = []
        self.busy = 0

    def started(self) -> None:
        with self.cond:
            self.busy += 1

    def ended(self) -> None:
        with self.cond:
            self.busy -= 1
            self.cond.notify_all()

    def sleep(self, job: Job, seconds: float) -> bool:
        """Wait `seconds` of session time; False when the job was cancelled meanwhile."""
        if not self.clock.virtual:
            return not job.cancel_event.wait(seconds)
        ev = threading.Event()
        with self.cond:
            if job.cancel_event.is_set():
                return False
            self.waiting.append((self.clock.now_ns() + int(seconds * 1e9), ev, job))
            self.busy -= 1
            self.cond.notify_all()
        ev.wait()  # the waker counts us busy again before it sets the event
        return not job.cancel_event.is_set()

    def wake_due(self, now_ns: int) -> None:
        with self.cond:
            keep = []
            for target, ev, job in self.waiting:
                if target <= now_ns or job.cancel_event.is_set():
                    self.busy += 1
                    ev.set()
                else:
                    keep.append((target, ev, job))
            self.waiting = keep

    def settle(self, timeout_s: float = 10.0) -> bool:
        """Block until every worker is done or waiting on the clock (tests and the soak use it)."""
        with self.cond:
            return self.cond.wait_for(lambda: self.busy <= 0, timeout_s)
