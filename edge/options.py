"""Typed options, one pattern for every component: built once from the session's flat settings.

A component declares its options as a dataclass, each field named like the session setting it takes and its
default there and nowhere else; `from_settings` fills the fields from the flat settings (a setting absent, None
or empty keeps the default). A value of the wrong kind is one sentence that names the setting (`SettingsError`),
so no builder reads a raw key with a default of its own. `edge/settings.py` checks the session's own fields with
the same `typed`.
"""
from __future__ import annotations

import types
import typing
from dataclasses import fields
from typing import Any, Iterable, Mapping, TypeVar

T = TypeVar("T")


class SettingsError(ValueError):
    """A setting the session cannot run with; the message says which, what it is, and what it must be."""


_KINDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text", dict: "a mapping",
          list: "a list"}


def typed(name: str, value: Any, hint: Any) -> Any:
    """`value` if it fits the annotation `hint` (an int is taken for a float); else one sentence."""
    allowed = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)
    allowed = tuple(typing.get_origin(a) or a for a in allowed)
    if value is None and type(None) in allowed:
        return value
    for kind in allowed:
        if kind is type(None):
            continue
        if isinstance(value, bool) and kind in (int, float):
            continue
        if kind is float and isinstance(value, int):
            return float(value)
        if isinstance(value, kind):
            return value
    wanted = " or ".join(_KINDS.get(k, getattr(k, "__name__", str(k))) for k in allowed if k is not type(None))
    raise SettingsError(f"{name} is {value!r}; it must be {wanted}.")


def from_settings(cls: type[T], config: Mapping[str, Any], owner: str, names: Iterable[str] | None = None) -> T:
    """`cls` (a dataclass) with each field in `names` (all by default) taken from the setting of its name.

    `owner` starts the sentence for a wrong value ("the Piper voice's" -> "the Piper voice's threads is 'two';
    it must be a whole number.")."""
    hints = typing.get_type_hints(cls)
    taken = {f.name for f in fields(cls)} if names is None else set(names)
    given = {}
    for f in fields(cls):
        value = config.get(f.name) if f.name in taken else None
        if value is None or value == "":
            continue
        given[f.name] = typed(f"{owner} {f.name}", value, hints[f.name])
    return cls(**given)
