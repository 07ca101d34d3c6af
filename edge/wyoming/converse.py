"""Wyoming's conversation handler: a transcript in, the harness's spoken answer out.

Each transcript becomes one work item of the harness configured with
`--harness` (the same router, tools and chat as a voice session), so "turn off
the kitchen light" from a Home Assistant pipeline calls the same tool and is
answered in the same words, through the same understanding path
(edge/understand/). A Wyoming answer is one reply with no way to speak again
later, so the harness is built knowing it cannot speak later: a timer is
refused in words there (Home Assistant's own timers, or the device's voice
session, can keep one).

When a request fails while a remote tool server is down or refuses its token,
the answer says so in one sentence ("I can't reach Home Assistant right now.")
rather than whatever the request fell through to without its tools.

A harness folder that cannot be written (a full disk, a folder that cannot be made) does not stop the
server: recognition and voices go on, a transcript is declined in the voice session's words while it lasts
(edge/harness/outage.py), and the harness is built again, at most every RETRY_S, once the folder takes writes.
"""
from __future__ import annotations

import itertools
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from edge.clock import MonotonicClock
from edge.harness.assemble import Built
from edge.harness.core import Harness
from edge.harness import states as S
from edge.harness.outage import Outage
from edge.harness.store import StoreUnwritable
from edge.understand.build import understanding_harness
from edge.understand.honest import NAME

ANSWERED = (S.COMPLETED, S.DELIVERING, S.DELIVERED)
RETRY_S = 2.0  # a folder that could not be written: how often a transcript tries to build the harness again


def unreachable(server: Any) -> str:
    """The sentence for a remote tool server that is not connected: Home Assistant by its MCP path."""
    name = "Home Assistant" if urlparse(getattr(server.spec, "url", "")).path.rstrip("/").endswith("/api/mcp") \
        else f"the {server.name} server"
    if server.refused and any(code in (401, 403) for code in server.refused):
        return f"I can't reach {name} right now: it refused my access token."
    return f"I can't reach {name} right now."


class Conversation:
    def __init__(self, cfg: dict[str, Any], timeout_s: float = 60.0) -> None:
        self.cfg, self.dir = cfg, Path(cfg.get("dir") or "state/wyoming")
        self.timeout_s = timeout_s
        self.outage = Outage()
        self.built: Built | None = None
        self.retry_at = 0.0
        self.refusals = 0  # the store's refused writes already seen
        self._ids = itertools.count(1)
        # Unique to this run: an id met again in the persisted store would be taken for the earlier request.
        self._stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._build()

    def _build(self) -> None:
        try:  # no session to deliver to: answers are read back here
            self.built = understanding_harness(self.cfg, self.dir, MonotonicClock(), lambda msg: None,
                                               speaks_later=False)
        except StoreUnwritable as exc:  # the server goes on without the harness; built again later
            self.outage.begin(exc)
            self.retry_at = time.monotonic() + RETRY_S
            return
        self.outage.end(self.dir)

    @property
    def problems(self) -> list[str]:
        return self.built.problems if self.built is not None else []

    def _harness(self) -> Harness | None:
        with self._lock:
            if self.built is None and time.monotonic() >= self.retry_at:
                self._build()
            return self.built.harness if self.built is not None else None

    def _declined(self, exc: StoreUnwritable | None) -> tuple[bool, str]:
        if exc is not None:
            self.outage.begin(exc)
        return False, self.outage.words()

    def answer(self, text: str) -> tuple[bool, str]:
        """(handled, what to say) for one transcript; blocks until the work item ends."""
        h = self._harness()
        if h is None:
            return self._declined(None)
        with self._lock:
            work_id = f"wyoming-{self._stamp}-{next(self._ids)}"
        try:
            if self.outage.down:
                self._drop_stranded(h)
            h.accept(work_id, text, h.clock.now_ns(), 0)
        except StoreUnwritable as exc:
            return self._declined(exc)
        self.outage.end(self.dir)  # stored: the folder can be written (logged only after an outage)
        self.refusals = h.store.refusals  # refusals from here on are this request's work being refused
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            try:
                h.poll()
            except StoreUnwritable as exc:
                return self._declined(exc)
            if h.store.refusals != self.refusals and h.store.last_refusal is not None:
                self.refusals = h.store.refusals  # a task's next state refused on its worker thread
                return self._declined(h.store.last_refusal)
            item = h.store.get(work_id)
            if item is not None and item.state in ANSWERED:
                if item.capability == NAME:  # a guard's sentence is not a handled request; a down server says why
                    return False, self._down() or item.result
                return True, item.result
            if item is not None and item.state in S.TERMINAL:
                return False, self._down() or item.notice or "Sorry, I couldn't do that."
            time.sleep(0.02)
        h.cancel(work_id, "took too long for the conversation handler")
        return False, "Sorry, that took too long."

    def _drop_stranded(self, h: Harness) -> None:
        """Work whose next state the folder refused has no one waiting for it any more (a Wyoming answer is
        read back at once): it is cancelled, not run again later. Raises StoreUnwritable while still refused."""
        with h.lock:
            stranded = [i.id for i in h.store.in_states([S.RUNNING]) if i.id not in h.jobs]
        for work_id in stranded:
            h.cancel(work_id, "the harness folder could not be written")

    def _down(self) -> str | None:
        hub = self.built.hub if self.built is not None else None
        down = [s for s in (hub.servers if hub is not None else []) if s.remote and s.session is None]
        return unreachable(down[0]) if down else None

    def close(self) -> None:
        if self.built is not None:
            self.built.close()
