"""Typed options, one pattern for every component: built once from the session's flat settings.

A component declares its options as a dataclass, each field named like the session setting it takes and its
default there and nowhere else; `from_settings` fills the fields from the flat settings (a setting absent, None
or empty keeps the default). A value of the wrong kind is one sentence that names the setting (`SettingsError`),
so no builder reads a raw key with a default of its own. `edge/settings.py` checks the session's own fields with
the same `typed`. A section of a settings file (the harness's `chat`, a bundle's `venus.json`) is read with `given`:
there a name present is a value even when it is null (a scripted router's `"default": null`), and `known_only` refuses
a name the section has no field for.
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


def given(cls: type, section: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """The fields of `cls` (a dataclass) that `section`, a mapping from a settings file, names, each of its kind.

    Unlike the flat settings, a name present there is taken as it is (None too, where the field allows None); only
    an absent one keeps the default. Names `cls` does not have are the caller's to refuse or leave."""
    if not isinstance(section, Mapping):
        raise SettingsError(f"{owner} settings are {section!r}; they must be a mapping.")
    hints = typing.get_type_hints(cls)
    return {f.name: typed(f"{owner} {f.name}", section[f.name], hints[f.name]) for f in fields(cls)
            if f.name in section}


def known_only(cls: type, section: Mapping[str, Any], owner: str) -> None:
    """One sentence for the first name in `section` (a settings file's mapping) that `cls` (a dataclass) has no field
    for: a typo ("modle") would otherwise be passed over and the default taken in its place."""
    known = sorted(f.name for f in fields(cls))
    for key in section:
        if key not in known:
            raise SettingsError(f"{owner} has no setting {key!r}; known: {', '.join(known)}.")
