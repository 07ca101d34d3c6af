"""One registry of message types, and the routes they declare: who sends each one, and to whom.

A message's fields travel in the msgpack header; bulk data (PCM, frames)
travels in raw payload frames after it. Each type names its senders and
receivers (node names, "supervisor", or ANY_NODE); the bus topics a node
subscribes to are derived from those declarations, never listed twice.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

M = TypeVar("M", bound="Message")

CONTROL = "ctl"  # the topic of messages on the control socket (node <-> supervisor), never on the bus
ANY_NODE = "*"  # every node of the graph
SUPERVISOR = "supervisor"
OUTSIDE = "outside"  # a client on the bus that is not a node (a user interface, a test)

_REGISTRY: dict[str, type["Message"]] = {}


@dataclass
class Message:
    """Base of every message. Subclasses set TYPE, TOPIC, SENDERS and RECEIVERS."""

    TYPE: ClassVar[str] = ""
    TOPIC: ClassVar[str] = ""  # PUB/SUB topic; CONTROL for the control socket
    SENDERS: ClassVar[tuple[str, ...]] = ()
    RECEIVERS: ClassVar[tuple[str, ...]] = ()  # for a reliable message the first one acknowledges it
    PER_NODE: ClassVar[bool] = False  # published on TOPIC + "." + the receiving node's name
    RELIABLE: ClassVar[bool] = False  # carries `id`; acknowledged, re-sent, de-duplicated
    VOLATILE: ClassVar[frozenset[str]] = frozenset()  # timing fields left out of content digests

    def body(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def contradiction(self, payload: list[bytes]) -> str | None:
        """What in the fields or payload frames cannot be true of this message (a sentence), or None.
        Types whose payload or numbers have a shape say so here; the decoder drops what contradicts."""
        return None

    def content(self) -> dict[str, Any]:
        """The fields that must match between a session and its replay."""
        return {k: v for k, v in self.body().items() if k not in self.VOLATILE}


def message(cls: type[M]) -> type[M]:
    """Class decorator: make a dataclass and register it under its TYPE."""
    cls = dataclass(cls)
    if not cls.TYPE or not cls.TOPIC:
        raise TypeError(f"{cls.__name__} must set TYPE and TOPIC")
    if cls.TYPE in _REGISTRY and _REGISTRY[cls.TYPE] is not cls:
        raise TypeError(f"message type {cls.TYPE!r} registered twice")
    for what in ("SENDERS", "RECEIVERS"):
        names = getattr(cls, what)
        if not isinstance(names, tuple) or not names or not all(isinstance(n, str) and n for n in names):
            raise TypeError(f"{cls.__name__}.{what} must be a non-empty tuple of names")
    if cls.RELIABLE and "id" not in {f.name for f in fields(cls)}:
        raise TypeError(f"reliable message {cls.TYPE!r} needs an 'id' field")
    if cls.RELIABLE and cls.RECEIVERS[0] in (ANY_NODE, SUPERVISOR):
        raise TypeError(f"reliable message {cls.TYPE!r} must name the node that acknowledges it first")
    _REGISTRY[cls.TYPE] = cls
    return cls


def lookup(type_name: str) -> type[Message] | None:
    return _REGISTRY.get(type_name)


def all_types() -> dict[str, type[Message]]:
    return dict(_REGISTRY)


def on_bus(cls: type[Message]) -> bool:
    """Published on the bus (PUB/SUB), as opposed to the control socket."""
    return cls.TOPIC != CONTROL


def receives(cls: type[Message], node: str) -> bool:
    return node in cls.RECEIVERS or ANY_NODE in cls.RECEIVERS


def acknowledger(cls: type[Message]) -> str:
    """The one receiver whose Ack the sender waits for (see NodeRunner._on_data for why only one)."""
    return cls.RECEIVERS[0]


def topic_of(cls: type[Message], node: str = "") -> str:
    """The topic a message of this type travels on to `node`."""
    return f"{cls.TOPIC}.{node}" if cls.PER_NODE else cls.TOPIC


def topics_for(node: str) -> tuple[str, ...]:
    """Every bus topic `node` must subscribe to: those of the message types that name it as a receiver."""
    return tuple(sorted({topic_of(c, node) for c in _REGISTRY.values() if on_bus(c) and receives(c, node)}))


def from_body(cls: type[M], body: dict[str, Any]) -> M:
    """Build a message from a header body; unknown fields are ignored, missing required ones fail."""
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in body.items() if k in names}
    missing = [
        f.name for f in fields(cls)
        if f.name not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ValueError(f"{cls.TYPE} is missing field(s) {', '.join(missing)}")
    return cls(**kwargs)


__all__ = ["Message", "message", "lookup", "all_types", "from_body", "field", "on_bus", "receives", "acknowledger",
           "topic_of", "topics_for", "CONTROL", "ANY_NODE", "SUPERVISOR", "OUTSIDE"]
