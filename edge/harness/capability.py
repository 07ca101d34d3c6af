"""Capabilities: what a work item can be dispatched to, each with a JSON Schema for its arguments.

A capability's `run(arguments, ctx)` is called on a worker thread. It raises
`TransientError` for failures worth retrying (a refused connection, a 503)
and `CapabilityError` with a speakable sentence for the rest.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import jsonschema

from edge.harness.evidence import Evidence


class CapabilityError(RuntimeError):
    """A failure told in words that can be spoken to the user."""


class TransientError(CapabilityError):
    """A failure that may go away: retried with backoff."""


class InvalidArguments(CapabilityError):
    pass


class Cancelled(CapabilityError):
    pass


@dataclass
class Later:
    """Words the harness is to say by itself later, unasked (a timer's ring): stored with the answer that
    announces it, as a work item of its own that waits in the queue until it is due, so a restart keeps it."""

    after_s: float  # from when the answer is stored
    text: str  # what to say then
    about: dict[str, Any] = field(default_factory=dict)  # what it is, for `RunContext.scheduled` to list


@dataclass
class Outcome:
    text: str
    ttl_s: float | None = None  # the backend's own freshness limit, from completion
    later: Later | None = None  # a result of its own, said when it is due (the answer says it is set)


@dataclass
class Scheduled:
    """A `Later` of this capability still waiting to be said."""

    work_id: str
    due_in_s: float  # session time left until it is said
    about: dict[str, Any]


@dataclass
class RunContext:
    """What a running task may use: its instruction, frozen evidence, a cancel flag, progress, time."""

    work_id: str
    instruction: str
    attempt: int
    cancel_event: threading.Event
    sleep_fn: Callable[[float], bool]  # waits on the session clock; False when cancelled
    evidence_loader: Callable[[], Evidence | None] = lambda: None
    previous: list[tuple[str, str]] = field(default_factory=list)  # (instruction, result) it continues
    progress_fn: Callable[[str], None] = lambda text: None
    on_cancel: list[Callable[[], None]] = field(default_factory=list)
    scheduled: Callable[[], list[Scheduled]] = lambda: []  # this capability's Laters not yet said, soonest first
    unschedule: Callable[[str], bool] = lambda work_id: False  # drop one of them (True when it was waiting)

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def sleep(self, seconds: float) -> None:
        """Wait (on the session clock, virtual in tests); raises Cancelled if cancelled meanwhile."""
        if not self.sleep_fn(seconds):
            raise Cancelled("the task was cancelled")

    def evidence(self) -> Evidence | None:
        return self.evidence_loader()

    def progress(self, text: str) -> None:
        self.progress_fn(text)


def one_text(argument: str, max_length: int) -> dict[str, Any]:
    """The JSON Schema of most capabilities' arguments: one non-empty string, nothing else."""
    return {
        "type": "object",
        "properties": {argument: {"type": "string", "minLength": 1, "maxLength": max_length}},
        "required": [argument],
        "additionalProperties": False,
    }


class Capability(Protocol):
    name: str
    description: str
    instructions: str  # for the router's prompt: when to pick it and how to fill its arguments
    schema: dict[str, Any]  # JSON Schema of its arguments
    timeout_s: float

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome: ...


class Registry:
    """Registered capabilities by name; arguments are validated here, before anything runs."""

    def __init__(self) -> None:
        self._caps: dict[str, Capability] = {}
        self._validators: dict[str, jsonschema.protocols.Validator] = {}

    def add(self, cap: Capability) -> None:
        if cap.name in self._caps:
            raise ValueError(f"two capabilities are named {cap.name!r}; rename one of them")
        cls = jsonschema.validators.validator_for(cap.schema)
        try:
            cls.check_schema(cap.schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"capability {cap.name!r} has an invalid argument schema: {exc.message}") from None
        self._caps[cap.name] = cap
        self._validators[cap.name] = cls(cap.schema)

    def get(self, name: str) -> Capability | None:
        return self._caps.get(name)

    def names(self) -> list[str]:
        return list(self._caps)

    def __iter__(self):
        return iter(self._caps.values())

    def __len__(self) -> int:
        return len(self._caps)

    def validate(self, name: str, arguments: Any) -> None:
        """Raise InvalidArguments with one sentence when `arguments` do not fit the capability's schema."""
        if name not in self._caps:
            raise InvalidArguments(f"there is no capability called {name}")
        if not isinstance(arguments, dict):
            raise InvalidArguments(f"the arguments for {name} must be an object")
        err = jsonschema.exceptions.best_match(self._validators[name].iter_errors(arguments))
        if err is not None:
            where = "/".join(str(p) for p in err.absolute_path)
            raise InvalidArguments(f"the arguments for {name} are invalid"
                                   f"{' at ' + where if where else ''}: {err.message}")

    def close(self) -> None:
        for cap in self._caps.values():
            closer = getattr(cap, "close", None)
            if closer is not None:
                closer()
