"""One registry of message types: each a dataclass whose docstring names sender and receiver.

A message's fields travel in the msgpack header; bulk data (PCM, frames)
travels in raw payload frames after it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

M = TypeVar("M", bound="Message")

_REGISTRY: dict[str, type["Message"]] = {}


@dataclass
class Message:
    """Base of every message. Subclasses set TYPE, TOPIC, SENDER and RECEIVER."""

    TYPE: ClassVar[str] = ""
    TOPIC: ClassVar[str] = ""  # PUB/SUB topic prefix; "ctl" for the control socket
    SENDER: ClassVar[str] = ""
    RECEIVER: ClassVar[str] = ""
    RELIABLE: ClassVar[bool] = False  # carries `id`; acknowledged, re-sent, de-duplicated
    VOLATILE: ClassVar[frozenset[str]] = frozenset()  # timing fields left out of content digests

    def body(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

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
    if cls.RELIABLE and "id" not in {f.name for f in fields(cls)}:
        raise TypeError(f"reliable message {cls.TYPE!r} needs an 'id' field")
    _REGISTRY[cls.TYPE] = cls
    return cls


def lookup(type_name: str) -> type[Message] | None:
    return _REGISTRY.get(type_name)


def all_types() -> dict[str, type[Message]]:
    return dict(_REGISTRY)


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


__all__ = ["Message", "message", "lookup", "all_types", "from_body", "field"]
