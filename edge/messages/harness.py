"""Harness messages: delegated work out, results back, delivery confirmed."""
from __future__ import annotations

from edge.wire.registry import OUTSIDE, Message, field, message

__all__ = ["DelegateRequest", "BackendResult", "Delivered", "CancelWork", "WorkEvent"]


@message
class DelegateRequest(Message):
    """frontend -> harness: a `<delegate>` span; acknowledged only once stored durably."""

    TYPE = "delegate_request"; TOPIC = "hrn.delegate"; SENDERS = ("frontend",); RECEIVERS = ("harness", "capture")
    RELIABLE = True
    VOLATILE = frozenset({"id"})
    id: str
    """Unique id (acknowledgement, de-duplication)."""
    instruction: str
    """What to do, as the frontend wrote it."""
    opened_ns: int
    """When the span opened: the evidence cutoff."""
    index: int
    """The chunk in which the span opened."""
    closed_by: str = "</delegate>"
    """What closed the span (the tag, or the end of the turn)."""


@message
class BackendResult(Message):
    """harness -> frontend: text to speak as `<backend>...</backend>` at an idle listen boundary."""

    TYPE = "backend_result"; TOPIC = "hrn.result"; SENDERS = ("harness",); RECEIVERS = ("frontend",)
    RELIABLE = True
    id: str
    """Unique id (acknowledgement, de-duplication; Delivered names it)."""
    work_id: str
    """The work item it answers."""
    text: str
    """What to say."""
    kind: str = "result"
    """result, progress or failure."""
    expires_ns: int = 0
    """Session time after which it is no longer worth saying (0: never)."""
    asked_ns: int = -1
    """When its request was made, if a new question after that makes it stale (stale_after_turn); -1: never."""
    opened_ns: int = -1
    """When its request was made, if a "stop" after that gives it up (any request); -1: words due later."""


@message
class Delivered(Message):
    """frontend -> harness: every speech piece of a result's reply was played and acknowledged."""

    TYPE = "delivered"; TOPIC = "hrn.delivered"; SENDERS = ("frontend",); RECEIVERS = ("harness", "capture")
    RELIABLE = True
    id: str
    """Unique id (acknowledgement, de-duplication)."""
    work_id: str
    """The work item whose result was spoken."""
    result_id: str = ""
    """The BackendResult id that was spoken (a progress notice, a failure notice, a result)."""


@message
class CancelWork(Message):
    """a user interface on the bus -> harness: stop a work item ("never mind"); `work_id` "*" cancels all."""

    TYPE = "cancel_work"; TOPIC = "hrn.cancel"; SENDERS = (OUTSIDE,); RECEIVERS = ("harness",)
    RELIABLE = True
    VOLATILE = frozenset({"id"})
    id: str
    """Unique id (acknowledgement, de-duplication)."""
    work_id: str
    """The work item to stop, or "*" for every open one."""
    reason: str = "cancelled"
    """Why (kept with the item)."""


@message
class WorkEvent(Message):
    """harness -> recorder, capture: a work item changed state (a file session waits for open ones)."""

    TYPE = "work_event"; TOPIC = "hrn.work"; SENDERS = ("harness",); RECEIVERS = ("recorder", "capture")
    VOLATILE = frozenset({"detail"})
    work_id: str
    """The work item."""
    state: str
    """Its new state (edge/messages/work_states.py: queued, running, completed, delivering, delivered, ...)."""
    detail: str = ""
    """A short explanation."""
    info: dict = field(default_factory=dict)
    """Details of the state (capability, attempts, timings)."""
