"""Direct delivery beside the proxy: each message once, in each sender's order, nothing lost.

On the direct bus a node receives every message from the other nodes on two paths: straight from the sender's
own PUB socket (one hop, few thread wake-ups) and through the supervisor's proxy (complete: the proxy has held
every subscription since before the session started). One copy is handled, the other dropped.

A direct connection is only trusted once it has carried a message that the proxy also carried, and the proxy
has caught up with every direct copy seen: before that (start-up, a sender restarted) the subscription may not
have reached the sender yet and the direct copy of an earlier message may be missing, so until then only the
proxy's copies are handled. After that the direct path is complete and first-in-first-out per sender, so only
its copies are handled, even where the proxy's comes first: a node takes some topics off the proxy
(edge/graph/proxy_topics.py), so the proxy's copy of a later message may overtake the direct copy of an
earlier one.

Sequence numbers: each life of a node numbers its messages from `restarts << LIFE_SHIFT`, so a restarted
sender starts a new stream that must earn trust again. Re-sent reliable messages get a new number.

A sender is `proven` while its newest life is trusted and not known to have ended: then its direct copies are
complete and the proxy's copies are only second copies, which edge/graph/proxy_topics.py stops receiving.
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
        self._life: dict[str, int] = {}  # the newest life seen of each sender
        self._ended: dict[str, int] = {}  # lives known to be over (the supervisor said so), per sender
        self.changed = False  # a sender became proven since the caller last looked

    def accept(self, src: str, seq: int, direct: bool) -> bool:
        life = seq >> LIFE_SHIFT
        st = self._streams.get((src, life))
        if st is None:
            st = self._streams[src, life] = _Stream()
            self._life[src] = max(life, self._life.get(src, life))
        if seq <= st.floor or seq in st.handled:
            if direct and not st.trusted:
                self._trust(src, st)  # the proxy's copy came first: this path is live from here on
            self.duplicates += 1
            return False
        if st.trusted:
            if not direct:
                self.duplicates += 1  # the direct copy comes (or came): handled in its sender's order
                return False
            self.direct += 1
        elif direct:
            st.direct_early.add(seq)  # its proxy copy is on its way; hold on to the order the proxy gives
            if len(st.direct_early) > WINDOW:
                st.direct_early.clear()
            return False
        elif seq in st.direct_early:
            # Trusted once the proxy has caught up with every direct copy seen: a direct copy that came early is
            # not kept, so a later one would only be handled from the proxy, which may no longer be listened to.
            st.direct_early = {e for e in st.direct_early if e > seq}
            if not st.direct_early:
                self._trust(src, st)
        st.handled.add(seq)
        st.order.append(seq)
        if len(st.order) > WINDOW:
            oldest = st.order.popleft()
            st.handled.discard(oldest)
            st.floor = max(st.floor, oldest)
        return True

    def _trust(self, src: str, st: _Stream) -> None:
        st.trusted = True
        st.direct_early.clear()
        self.changed = self.changed or self.proven(src)

    def proven(self, src: str) -> bool:
        """The direct path from `src` carries everything it sends now: its newest life is trusted and alive."""
        life = self._life.get(src)
        if life is None or life <= self._ended.get(src, -1):
            return False
        st = self._streams.get((src, life))
        return st is not None and st.trusted

    def ended(self, src: str) -> None:
        """Every life of `src` seen so far is over: its next one must be proven before it counts."""
        self._ended[src] = self._life.get(src, -1)

    def stats(self) -> dict[str, int]:
        return {"direct": self.direct, "second_copies": self.duplicates}
