"""The work-item states, spelled once: the harness moves items between them (edge/harness/states.py holds the
allowed moves), `WorkEvent` carries them, and the nodes and the trace that read a work item's state take them
from here. Saved stores and journals hold these strings, so a value is never renamed."""
from __future__ import annotations

QUEUED, RUNNING, CANCELLING, COMPLETED = "queued", "running", "cancelling", "completed"
DELIVERING, DELIVERED, CANCELLED, FAILED = "delivering", "delivered", "cancelled", "failed"

STATES = (QUEUED, RUNNING, CANCELLING, COMPLETED, DELIVERING, DELIVERED, CANCELLED, FAILED)
TERMINAL = frozenset({DELIVERED, CANCELLED, FAILED})  # an item in one of these never moves again
WORKING = frozenset({QUEUED, RUNNING, CANCELLING})  # the harness still works on it (wall time passes)
OWED = frozenset({QUEUED, RUNNING, COMPLETED, DELIVERING})  # an answer is still to come: what "cancel all" stops
