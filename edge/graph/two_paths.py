"""Direct delivery beside the proxy: each message once, in each sender's order, nothing lost.

On the direct bus a node receives every message from the other nodes twice: straight from the sender's own
PUB socket (one hop, few thread wake-ups) and through the supervisor's proxy (complete: the proxy has held
every subscription since before the session started). The first copy is handled, the second dropped.

A direct connection is only trusted once it has carried a message that the proxy also carried: before that
(start-up, a sender restarted) the subscription may not have reached the sender yet and the direct copy of
an earlier message may be missing, so until then only the proxy's copies are handled. After that both paths
are complete and first-in-first-out per sender, so taking whichever copy comes first keeps the order.

Sequence numbers: each life of a node numbers its messages from `restarts << LIFE_SHIFT`, so a restarted
sender starts a new stream that must earn trust again. Re-sent reliable messages get a new number.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

LIFE_SHIFT = 40
WINDOW = 20_000  # copies handled per stream that are remembered: the proxy's lag in messages, with a margin


def first_seq(restarts: int) -> int:
    return restarts << LIFE_SHIFT


@dataclass
class _Stream:
    trusted: bool = False
    direct_early: set[int] = field(default_factory=set)  # direct copies seen before trust, handled via the proxy
    handled: set[int] = field(default_factory=set)
    order: collections.deque[int] = field(default_factory=collections.deque)
    floor: int = -1  # every seq at or below was handled or is a duplicate


class TwoPaths:
    """Decides, per received copy, whether this node handles it (True) or drops it as the second copy."""

    def __init__(self) -> None:
        self._streams: dict[tuple[str, int], _Stream] = {}
        self.duplicates = 0  # second copies dropped
        self.direct = 0  # messages handled from their direct copy
        self.late = 0  # proxy copies handled after a later direct one (order broken, nothing lost): should be 0

    def accept(self, src: str, seq: int, direct: bool) -> bool:
        st = self._streams.setdefault((src, seq >> LIFE_SHIFT), _Stream())
        if seq <= st.floor or seq in st.handled:
            if direct and not st.trusted:
                st.trusted = True  # the proxy's copy came first: this path is live from here on
                st.direct_early.clear()
            self.duplicates += 1
            return False
        if direct and not st.trusted:
            st.direct_early.add(seq)  # its proxy copy is on its way; hold on to the order the proxy gives
            if len(st.direct_early) > WINDOW:
                st.direct_early.clear()
            return False
        if not direct:
            if seq in st.direct_early:
                st.trusted = True
                st.direct_early.clear()
            elif st.trusted and st.order and seq < st.order[-1]:
                self.late += 1
        else:
            self.direct += 1
        st.handled.add(seq)
        st.order.append(seq)
        if len(st.order) > WINDOW:
            oldest = st.order.popleft()
            st.handled.discard(oldest)
            st.floor = max(st.floor, oldest)
        return True

    def stats(self) -> dict[str, int]:
        return {"direct": self.direct, "second_copies": self.duplicates, "late": self.late}
