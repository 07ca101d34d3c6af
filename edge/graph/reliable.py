"""Messages that must not be lost: kept until acknowledged, re-sent, and de-duplicated on receipt."""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass

HELD_RESEND_S = 5.0  # a message its receiver holds is re-sent this seldom: only a lost final Ack needs it


@dataclass
class _Pending:
    frames: list[bytes]
    next_send: float
    attempts: int
    holder: str = ""  # the node that has it and still works on it (Ack.held): no re-sends while it lives


class Outbox:
    """Sender side: every reliable message waits here until its Ack arrives."""

    def __init__(self, resend_s: float = 0.25, max_resend_s: float = 2.0) -> None:
        self.resend_s = resend_s
        self.max_resend_s = max_resend_s
        self._pending: dict[str, _Pending] = {}
        self.resent = 0

    def add(self, msg_id: str, frames: list[bytes]) -> None:
        self._pending[msg_id] = _Pending(frames, time.monotonic() + self.resend_s, 1)

    def ack(self, msg_id: str) -> bool:
        return self._pending.pop(msg_id, None) is not None

    def held(self, msg_id: str, by: str) -> None:
        """`by` has the message and acknowledges it once its work is done: re-sending it would only wake every
        receiver again, so it waits for that Ack, or for `by`'s next life (`holder_gone`)."""
        p = self._pending.get(msg_id)
        if p is not None:
            p.holder = by
            p.next_send = time.monotonic() + HELD_RESEND_S

    def holder_gone(self, node: str) -> None:
        """`node`'s life ended: what it held is re-sent as before, so its next life gets it."""
        now = time.monotonic()
        for p in self._pending.values():
            if p.holder == node:
                p.holder, p.attempts, p.next_send = "", 1, now + self.resend_s

    def due(self) -> list[list[bytes]]:
        """Frames to re-send now; each resend backs off up to `max_resend_s`."""
        now = time.monotonic()
        out = []
        for p in self._pending.values():
            if p.next_send <= now:
                p.attempts += 1
                p.next_send = now + (HELD_RESEND_S if p.holder else
                                     min(self.max_resend_s, self.resend_s * 2 ** min(p.attempts - 1, 6)))
                out.append(p.frames)
        self.resent += len(out)
        return out

    def pending(self) -> list[tuple[str, list[bytes]]]:
        """Every message still waiting for its Ack, oldest first (a node keeps them across a restart)."""
        return [(msg_id, p.frames) for msg_id, p in self._pending.items()]

    def next_deadline(self) -> float | None:
        return min((p.next_send for p in self._pending.values()), default=None)

    def __len__(self) -> int:
        return len(self._pending)


class Dedup:
    """Receiver side: remembers the last `capacity` ids so a re-sent message is handled once."""

    def __init__(self, capacity: int = 20000) -> None:
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.capacity = capacity
        self.duplicates = 0

    def seen(self, msg_id: str) -> bool:
        if msg_id in self._seen:
            self.duplicates += 1
            return True
        return False

    def remember(self, msg_id: str) -> None:
        self._seen[msg_id] = None
        if len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
