"""Control-plane messages: on the control socket (node DEALER <-> supervisor ROUTER), polled before data.

Also here: the supervisor's own bus messages for the journal, the bus
probe and the acknowledgement of reliable messages.
"""
from __future__ import annotations

from edge.wire.registry import ANY_NODE, CONTROL, SUPERVISOR, Message, field, message

__all__ = ["Hello", "Ready", "Start", "Fatal", "Heartbeat", "Checkpoint", "Finished", "Shutdown", "Interrupt",
           "NodeEvent", "SessionEnd", "Probe", "Ack", "LifeEnded", "ProxyAgain"]


@message
class Hello(Message):
    """any node -> supervisor: the process is up (first message of the start-up handshake)."""

    TYPE = "hello"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    node: str
    """The node's name in the graph."""
    pid: int
    """Its process id (the supervisor's own for a node run as a thread)."""
    restarts: int = 0
    """How many times this node has been restarted before."""


@message
class Ready(Message):
    """any node -> supervisor: set-up done (models loaded, subscriptions live)."""

    TYPE = "ready"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    node: str
    """The node's name in the graph."""
    setup_ms: float = 0.0
    """How long set-up took."""
    busy_s: float = 0.0
    """The longest this node may go without a heartbeat while it works (0: the supervisor's default)."""


@message
class Start(Message):
    """supervisor -> every node: every node is ready; begin the session."""

    TYPE = "start"; TOPIC = CONTROL; SENDERS = (SUPERVISOR,); RECEIVERS = (ANY_NODE,)
    epoch: int = 0
    """The current epoch (a restarted node joins at it)."""
    origin_ns: int = 0
    """time.monotonic_ns() at session start: t = 0 on the session clock."""


@message
class Fatal(Message):
    """any node -> supervisor: set-up failed for a reason a restart cannot fix (e.g. no microphone)."""

    TYPE = "fatal"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    node: str
    """The node's name in the graph."""
    reason: str
    """One sentence for the user."""


@message
class Heartbeat(Message):
    """any node -> supervisor: alive, with counters for the session report."""

    TYPE = "heartbeat"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    VOLATILE = frozenset({"stats"})
    node: str
    """The node's name in the graph."""
    stats: dict = field(default_factory=dict)
    """The node's counters (messages handled, sent, rejected, and its own)."""
    busy_s: float = 0.0
    """Seconds the step starting now may block without a heartbeat; 0: over, the short hang limit is back."""


@message
class Checkpoint(Message):
    """any node -> supervisor: small state handed back to the node if it is restarted."""

    TYPE = "checkpoint"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    node: str
    """The node's name in the graph."""
    state: dict = field(default_factory=dict)
    """Given back to the restarted node as its `restore`."""


@message
class Finished(Message):
    """any node -> supervisor: this node's part of the session is complete."""

    TYPE = "finished"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    node: str
    """The node's name in the graph."""


@message
class Shutdown(Message):
    """supervisor -> every node: stop now (graceful; a kill follows after the grace period)."""

    TYPE = "shutdown"; TOPIC = CONTROL; SENDERS = (SUPERVISOR,); RECEIVERS = (ANY_NODE,)
    reason: str = ""
    """Why the session ends."""


@message
class Interrupt(Message):
    """frontend -> supervisor -> every other node: the user took the floor; the epoch bumps, older speech goes.

    The only path an interrupt takes, on either clock. It travels on the control socket, which every
    node polls before data, so on the real clock it never waits behind audio. On the virtual clock a node
    applies it just before the first data message of the new epoch, so a session replays the same however
    control and data interleave. The supervisor also copies it onto the bus (topic sys.interrupt) for the
    journal.
    """

    TYPE = "interrupt"; TOPIC = CONTROL; SENDERS = ("frontend", SUPERVISOR); RECEIVERS = (SUPERVISOR, ANY_NODE)
    VOLATILE = frozenset({"onset_ns", "t_ns"})
    epoch: int
    """The new epoch: everything stamped with an older one is dropped."""
    reason: str = "barge-in"
    """Why (for the journal and logs)."""
    onset_ns: int | None = None
    """When the user's speech began, if known."""
    t_ns: int = 0
    """When the frontend decided, on the session clock (the virtual clock cuts playback here)."""


@message
class NodeEvent(Message):
    """supervisor -> recorder: a node started, became ready, crashed, hung or was restarted."""

    TYPE = "node_event"; TOPIC = "sys.node"; SENDERS = (SUPERVISOR,); RECEIVERS = ("recorder",)
    VOLATILE = frozenset({"detail", "pid"})
    node: str
    """The node's name in the graph."""
    event: str
    """spawned, ready, finished, crashed, hung, failed, killed, ..."""
    detail: str = ""
    """A short explanation (exit code, restart delay)."""
    pid: int = 0
    """The node's process id."""
    restarts: int = 0
    """Restarts so far."""


@message
class SessionEnd(Message):
    """supervisor -> recorder: everything before this on the bus belongs to the session."""

    TYPE = "session_end"; TOPIC = "sys.end"; SENDERS = (SUPERVISOR,); RECEIVERS = ("recorder",)
    reason: str = ""
    """Why the session ended ("complete", a failure, a signal)."""


@message
class Probe(Message):
    """any node -> itself: proves its subscription path through the bus before it reports ready."""

    TYPE = "probe"; TOPIC = "sys.probe"; SENDERS = (ANY_NODE,); RECEIVERS = (ANY_NODE,)
    PER_NODE = True  # sys.probe.<node>: each node hears only its own
    node: str
    """The node probing."""
    nonce: int = 0
    """Counts the attempts."""


@message
class Ack(Message):
    """any node -> any node: the receiver of a reliable message handled it (stored, played, ...); sent on the
    sender's own topic (ack.<node>), so no other node wakes for it."""

    TYPE = "ack"; TOPIC = "ack"; SENDERS = (ANY_NODE,); RECEIVERS = (ANY_NODE,)
    PER_NODE = True
    id: str
    """The acknowledged message's id."""
    of: str = ""
    """Its type."""
    by: str = ""
    """The node acknowledging it."""
    held: bool = False
    """Received, its work still going on: not re-sent until acknowledged for good or this node's life ends."""


@message
class LifeEnded(Message):
    """supervisor -> any node: a node's life ended and its next one is on its way: what it held is sent again,
    and on the direct bus that life is heard through the proxy until its path is proven (edge/graph/proxy_topics.py)."""

    TYPE = "life_ended"; TOPIC = CONTROL; SENDERS = (SUPERVISOR,); RECEIVERS = (ANY_NODE,)
    node: str
    """The node that will be restarted."""


@message
class ProxyAgain(Message):
    """any node -> supervisor: this node hears `peer` through the proxy again and re-sends what it held; the
    supervisor starts the peer's next life once every running node has said so, so nothing is missed."""

    TYPE = "proxy_again"; TOPIC = CONTROL; SENDERS = (ANY_NODE,); RECEIVERS = (SUPERVISOR,)
    node: str
    """The node saying so."""
    peer: str
    """The node whose life ended (LifeEnded.node)."""
