"""A node's settings across the process boundary: a dataclass to plain JSON values and back."""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Mapping, TypeVar

T = TypeVar("T")


def to_plain(obj: Any) -> dict:
    return dataclasses.asdict(obj)


def from_plain(cls: type[T], data: Mapping[str, Any]) -> T:
    """Rebuild `cls` from `to_plain`'s output; nested dataclass fields are rebuilt too, unknown keys ignored."""
    hints = typing.get_type_hints(cls)
    kwargs = {f.name: _value(hints[f.name], data[f.name]) for f in dataclasses.fields(cls) if f.name in data}
    return cls(**kwargs)


def _value(hint: Any, value: Any) -> Any:
    union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    for kind in typing.get_args(hint) if union else (hint,):
        if dataclasses.is_dataclass(kind) and isinstance(value, Mapping):
            return from_plain(kind, value)  # type: ignore[arg-type]
    return value
