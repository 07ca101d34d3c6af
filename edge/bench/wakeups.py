"""Thread wake-ups of a running graph: voluntary context switches of every thread of every node's process.

Each voluntary switch is a thread going to sleep on a socket or a timer, so each is followed by one wake-up.
Sampled from /proc while the session runs (Linux), from the moment every node has started.
"""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edge.graph.supervisor import Supervisor

PERIOD_S = 0.02


def _task_switches(pid: int) -> dict[tuple[int, int], int]:
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out  # the process has ended
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        out[pid, int(tid)] = int(line.split()[1])
        except OSError:
            continue  # the thread has ended
    return out


class WakeupSampler:
    """Counts the wake-ups of the supervisor's process and its nodes' processes between start and `stop`."""

    def __init__(self, sup: "Supervisor") -> None:
        self.sup = sup
        self.first: dict[tuple[int, int], int] = {}
        self.last: dict[tuple[int, int], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wakeup-sampler", daemon=True)
        self._thread.start()

    def _sample(self) -> dict[tuple[int, int], int]:
        counts: dict[tuple[int, int], int] = {}
        for pid in {os.getpid(), *(c.pid for c in self.sup.children.values() if c.pid)}:
            counts.update(_task_switches(pid))
        counts.pop((os.getpid(), threading.get_native_id()), None)  # the sampler's own sleeps
        return counts

    def _run(self) -> None:
        while not self.sup.started and not self._stop.wait(0.005):
            pass
        self.first = self._sample()
        while not self._stop.wait(PERIOD_S):
            if self.sup.finished_reason is not None:
                break
            self.last.update(self._sample())

    def stop(self) -> int:
        """Wake-ups counted while the session ran."""
        self._stop.set()
        self._thread.join(timeout=5)
        return sum(n - self.first.get(task, 0) for task, n in self.last.items())
