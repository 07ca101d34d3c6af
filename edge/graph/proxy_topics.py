"""Which of a node's topics it takes from the proxy: on the direct bus, only those it still needs there.

On the direct bus each message reaches a node twice (edge/graph/two_paths.py), and the proxy's copy wakes the
node and is dropped. So a topic leaves the node's proxy subscription once every node that may send on it is
proven (its direct path carries everything it sends), and comes back as soon as one of them is not: before a
restarted sender's next life starts, the supervisor tells every running node (LifeEnded) and waits until each
has its topics back on the proxy (ProxyAgain), so that life's first messages, which its direct path may miss,
come through the proxy. A topic the supervisor, an outside client or any node (ANY_NODE) may send on stays on
the proxy: only the proxy carries all of those.
"""
from __future__ import annotations

from typing import Callable, Iterable

from edge import messages as m
from edge.wire import ANY_NODE, OUTSIDE, SUPERVISOR, Message, acknowledger, all_types, on_bus, topic_of


def senders_by_topic(topics: Iterable[str], node: str, peers: Iterable[str]) -> dict[str, frozenset[str] | None]:
    """For each topic of `node`: the graph's nodes that may send on it, or None where anyone else may too.
    A node a type names that this graph has not (a session without vision) sends nothing here."""
    graph = set(peers)
    out: dict[str, frozenset[str] | None] = {}
    for topic in topics:
        senders: set[str] = set()
        pinned = False
        for cls in all_types().values():
            if on_bus(cls) and topic_of(cls, node) == topic:
                named = _senders(cls, node)
                senders |= set(named) & graph
                pinned = pinned or any(s in _NOT_A_NODE for s in named)
        out[topic] = None if pinned or not senders else frozenset(senders)
    return out


_NOT_A_NODE = (ANY_NODE, SUPERVISOR, OUTSIDE)


def _senders(cls: type[Message], node: str) -> tuple[str, ...]:
    """Who may send `cls` to `node`: its declared senders; for an Ack, the nodes that acknowledge what `node`
    sends reliably (only they publish on ack.<node>)."""
    if cls is not m.Ack:
        return cls.SENDERS
    return tuple(acknowledger(t) for t in all_types().values() if t.RELIABLE and node in t.SENDERS)


class ProxyTopics:
    """The topics this node has taken off its proxy subscription, kept in step with the proven senders."""

    def __init__(self, topics: Iterable[str], node: str, peers: Iterable[str]) -> None:
        self.senders = senders_by_topic(topics, node, peers)
        self.off: set[str] = set()

    def update(self, proven: Callable[[str], bool]) -> tuple[list[str], list[str]]:
        """(topics to unsubscribe from the proxy now, topics to subscribe to again)."""
        want = {t for t, s in self.senders.items() if s is not None and all(proven(n) for n in s)}
        drop, back = sorted(want - self.off), sorted(self.off - want)
        self.off = want
        return drop, back
