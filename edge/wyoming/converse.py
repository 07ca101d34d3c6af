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
from edge.harness import states as S
from edge.understand.build import understanding_harness
from edge.understand.honest import NAME

ANSWERED = (S.COMPLETED, S.DELIVERING, S.DELIVERED)


def unreachable(server: Any) -> str:
    """The sentence for a remote tool server that is not connected: Home Assistant by its MCP path."""
    name = "Home Assistant" if urlparse(str(server.spec.get("url", ""))).path.rstrip("/").endswith("/api/mcp") \
        else f"the {server.name} server"
    if server.refused and any(code in (401, 403) for code in server.refused):
        return f"I can't reach {name} right now: it refused my access token."
    return f"I can't reach {name} right now."


class Conversation:
    def __init__(self, cfg: dict[str, Any], timeout_s: float = 60.0) -> None:
        self.built = understanding_harness(cfg, Path(cfg.get("dir") or "state/wyoming"), MonotonicClock(),
                                   lambda msg: None, speaks_later=False)  # no session to deliver to: answers are read back here
        self.timeout_s = timeout_s
        self._ids = itertools.count(1)
        # Unique to this run: an id met again in the persisted store would be taken for the earlier request.
        self._stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()

    @property
    def problems(self) -> list[str]:
        return self.built.problems

    def answer(self, text: str) -> tuple[bool, str]:
        """(handled, what to say) for one transcript; blocks until the work item ends."""
        h = self.built.harness
        with self._lock:
            work_id = f"wyoming-{self._stamp}-{next(self._ids)}"
        h.accept(work_id, text, h.clock.now_ns(), 0)
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            h.poll()
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

    def _down(self) -> str | None:
        hub = self.built.hub
        down = [s for s in (hub.servers if hub is not None else []) if s.remote and s.session is None]
        return unreachable(down[0]) if down else None

    def close(self) -> None:
        self.built.close()
