"""The transitions allowed between work-item states (the states themselves: edge/messages/work_states.py)."""
from __future__ import annotations

from edge.messages.work_states import (CANCELLED, CANCELLING, COMPLETED, DELIVERED, DELIVERING, FAILED,  # noqa: F401
                                       QUEUED, RUNNING, TERMINAL)

TRANSITIONS: dict[str, frozenset[str]] = {
    QUEUED: frozenset({RUNNING, CANCELLED, FAILED}),
    # running -> queued: a transient failure waits for its retry, or a restart resumes it
    RUNNING: frozenset({COMPLETED, FAILED, CANCELLING, QUEUED}),
    CANCELLING: frozenset({CANCELLED}),
    COMPLETED: frozenset({DELIVERING, FAILED, CANCELLED}),
    # delivering -> completed: the reply was cut by an interrupt before it was fully played
    DELIVERING: frozenset({DELIVERED, COMPLETED, FAILED, CANCELLED}),
    DELIVERED: frozenset(),
    CANCELLED: frozenset(),
    FAILED: frozenset(),
}


class TransitionError(ValueError):
    pass


def check(old: str, new: str) -> None:
    if new not in TRANSITIONS.get(old, frozenset()):
        raise TransitionError(f"a work item cannot go from {old} to {new}")
