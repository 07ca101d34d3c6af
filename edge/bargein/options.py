"""The barge-in judge's options, built once from the session's flat settings: each by its own name, each
default here and nowhere else."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

REREAD_MODEL = "base"  # reads the overlap again (beam 5) before speech in the user's voice stops the reply


@dataclass(frozen=True)
class BargeInOptions:
    threads: int = 1
    asr: str = "tiny.en"  # the judge's own first reading, for a frontend that does not hear the overlap itself
    overlap_reread: str = REREAD_MODEL  # the second reading; "off" for none
    background_margin_db: float = 12.0  # speech this far below the reply's level is taken for the background
    realtime: bool = True  # live: the recognizers are loaded during set-up, never while chunks arrive

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "BargeInOptions":
        """A setting absent, None or empty keeps the default; one of the wrong kind is one sentence."""
        given = {}
        for name, kind in (("threads", int), ("asr", str), ("overlap_reread", str),
                           ("background_margin_db", float), ("realtime", bool)):
            value = config.get(name)
            if value is None or value == "":
                continue
            if kind is bool and not isinstance(value, bool) or kind is not str and isinstance(value, str):
                raise ValueError(f"barge-in's {name} is {value!r}; it must be "
                                 f"{ {int: 'a whole number', float: 'a number', bool: 'true or false'}[kind] }.")
            given[name] = kind(value)
        options = cls(**given)
        return options if options.threads >= 1 else cls(**{**given, "threads": 1})
