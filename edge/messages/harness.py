"""Harness messages: delegated work out, results back, delivery confirmed."""
from __future__ import annotations

from edge.wire.registry import Message, field, message


@message
class DelegateRequest(Message):
    """frontend -> harness: a `<delegate>` span; acknowledged only once stored durably."""

    TYPE = "delegate_request"; TOPIC = "hrn.delegate"; SENDER = "frontend"; RECEIVER = "harness"
    RELIABLE = True
    VOLATILE = frozenset({"id"})
    id: str
    instruction: str
    opened_ns: int  # evidence cutoff
    index: int  # the chunk in which the span opened
    closed_by: str = "</delegate>"


@message
class BackendResult(Message):
    """harness -> frontend: text to speak as `<backend>...</backend>` at an idle listen boundary."""

    TYPE = "backend_result"; TOPIC = "hrn.result"; SENDER = "harness"; RECEIVER = "frontend"
    RELIABLE = True
    id: str
    work_id: str
    text: str
    kind: str = "result"  # result | progress | failure
    expires_ns: int = 0


@message
class Delivered(Message):
    """frontend -> harness: every speech piece of a result's reply was played and acknowledged."""

    TYPE = "delivered"; TOPIC = "hrn.delivered"; SENDER = "frontend"; RECEIVER = "harness"
    RELIABLE = True
    id: str
    work_id: str
    result_id: str = ""  # the BackendResult id that was spoken (a progress notice, a failure notice, a result)


@message
class CancelWork(Message):
    """frontend (or a UI) -> harness: stop a work item ("never mind"); `work_id` "*" cancels all open work."""

    TYPE = "cancel_work"; TOPIC = "hrn.cancel"; SENDER = "frontend"; RECEIVER = "harness"
    RELIABLE = True
    VOLATILE = frozenset({"id"})
    id: str
    work_id: str
    reason: str = "cancelled"


@message
class WorkEvent(Message):
    """harness -> timeline: a work item changed state."""

    TYPE = "work_event"; TOPIC = "hrn.work"; SENDER = "harness"; RECEIVER = "recorder"
    VOLATILE = frozenset({"detail"})
    work_id: str
    state: str
    detail: str = ""
    info: dict = field(default_factory=dict)
