"""Work-item states and the transitions allowed between them."""
from __future__ import annotations

QUEUED, RUNNING, CANCELLING, COMPLETED = "queued", "running", "cancelling", "completed"
DELIVERING, DELIVERED, CANCELLED, FAILED = "delivering", "delivered", "cancelled", "failed"

TERMINAL = frozenset({DELIVERED, CANCELLED, FAILED})

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
