"""Control-plane messages: on the control socket (DEALER -> supervisor ROUTER), polled first."""
from __future__ import annotations

from edge.wire.registry import Message, field, message


@message
class Hello(Message):
    """node -> supervisor: the process is up (first message of the start-up handshake)."""

    TYPE = "hello"; TOPIC = "ctl"; SENDER = "any node"; RECEIVER = "supervisor"
    node: str
    pid: int
    restarts: int = 0


@message
class Ready(Message):
    """node -> supervisor: set-up done (models loaded, subscriptions live)."""

    TYPE = "ready"; TOPIC = "ctl"; SENDER = "any node"; RECEIVER = "supervisor"
    node: str
    setup_ms: float = 0.0
    busy_s: float = 0.0  # the longest this node may go without a heartbeat while it works (0: the default)


@message
class Start(Message):
    """supervisor -> node: every node is ready; begin the session."""

    TYPE = "start"; TOPIC = "ctl"; SENDER = "supervisor"; RECEIVER = "any node"
    epoch: int = 0
    origin_ns: int = 0  # time.monotonic_ns() at session start: t = 0 on the session clock


@message
class Fatal(Message):
    """node -> supervisor: set-up failed for a reason a restart cannot fix (e.g. no microphone)."""

    TYPE = "fatal"; TOPIC = "ctl"; SENDER = "any node"; RECEIVER = "supervisor"
    node: str
    reason: str


@message
class Heartbeat(Message):
    """node -> supervisor: alive, with counters for the timeline."""

    TYPE = "heartbeat"; TOPIC = "ctl"; SENDER = "any node"; RECEIVER = "supervisor"
    VOLATILE = frozenset({"stats"})
    node: str
    stats: dict = field(default_factory=dict)


@message
class Checkpoint(Message):
    """node -> supervisor: small state handed back to the node if it is restarted."""

    TYPE = "checkpoint"; TOPIC = "ctl"; SENDER = "any node"; RECEIVER = "supervisor"
    node: str
    state: dict = field(default_factory=dict)


@message
class Finished(Message):
    """node -> supervisor: this node's part of the session is complete."""

    TYPE = "finished"; TOPIC = "ctl"; SENDER = "capture, frontend, speech, recorder"; RECEIVER = "supervisor"
    node: str


@message
class Shutdown(Message):
    """supervisor -> node: stop now (graceful; a kill follows after the grace period)."""

    TYPE = "shutdown"; TOPIC = "ctl"; SENDER = "supervisor"; RECEIVER = "any node"
    reason: str = ""


@message
class Interrupt(Message):
    """frontend -> supervisor -> every node: the user took the floor; epoch bumps, older speech is dropped."""

    TYPE = "interrupt"; TOPIC = "ctl"; SENDER = "frontend"; RECEIVER = "supervisor, then all nodes"
    VOLATILE = frozenset({"onset_ns"})
    epoch: int
    reason: str = "barge-in"
    onset_ns: int | None = None


@message
class NodeEvent(Message):
    """supervisor -> timeline: a node started, became ready, crashed, hung or was restarted."""

    TYPE = "node_event"; TOPIC = "sys.node"; SENDER = "supervisor"; RECEIVER = "recorder"
    VOLATILE = frozenset({"detail", "pid"})
    node: str
    event: str
    detail: str = ""
    pid: int = 0
    restarts: int = 0


@message
class SessionEnd(Message):
    """supervisor -> recorder: everything before this on the bus belongs to the session."""

    TYPE = "session_end"; TOPIC = "sys.end"; SENDER = "supervisor"; RECEIVER = "recorder"
    reason: str = ""


@message
class Probe(Message):
    """node -> itself: proves its subscription path through the bus before it reports ready."""

    TYPE = "probe"; TOPIC = "sys.probe"; SENDER = "any node"; RECEIVER = "the same node"
    node: str
    nonce: int = 0


@message
class Ack(Message):
    """receiver -> sender: a reliable message was handled (stored, played, ...)."""

    TYPE = "ack"; TOPIC = "ack"; SENDER = "the receiver of a reliable message"; RECEIVER = "its sender"
    id: str
    of: str = ""
    by: str = ""
