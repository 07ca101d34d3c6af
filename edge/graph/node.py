"""A node: one process (or thread) of the graph, what it is given to talk with (`NodeIO`), and its spec.

The loop that runs a node is in edge/graph/runner.py.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator

import zmq

from edge import messages as m
from edge.clock import Clock
from edge.graph.reliable import Outbox
from edge.graph.two_paths import first_seq
from edge.wire import Envelope, Message, encode, topic_of, topics_for, with_seq

log = logging.getLogger(__name__)

DATA_HWM = 100_000


@dataclass
class NodeSpec:
    """Everything a node needs to start, JSON-serialisable (it crosses the process boundary)."""

    name: str
    config: dict  # the node's own settings (its settings_type as plain values), built and checked by the session
    endpoints: dict
    clock_origin_ns: int
    virtual_clock: bool = False
    restarts: int = 0
    restore: dict = field(default_factory=dict)
    heartbeat_s: float = 0.5
    start_timeout_s: float = 120.0
    node_class: str = ""  # "module:Class" that runs this node, from the session's node table
    peers: list[str] = field(default_factory=list)  # every node of the graph (direct bus: whom to listen to)


class NodeIO:
    """What a node may do to the outside world: publish, send reliably, talk to the supervisor."""

    def __init__(self, name: str, pub: zmq.Socket, ctl: zmq.Socket, clock: Clock, outbox: Outbox,
                 restarts: int = 0) -> None:
        self.name = name
        self.clock = clock
        self.epoch = 0
        self._pub = pub
        self._ctl = ctl
        self._seq = itertools.count(first_seq(restarts))  # each life of a node is its own stream
        self._outbox = outbox
        self._lock = threading.Lock()  # nodes may publish from a worker thread
        self.sent = 0
        self._held: dict[str, tuple[str, str]] = {}  # reliable message id -> (type, sender): acknowledged once done
        # Direct bus: the newest seq handled from each other sender. Sent with every message, so the recorder
        # (which gets everything through the proxy, where a cause can lag its effect) journals causes first.
        self.handled_from: dict[str, int] = {}

    def _frames(self, msg: Message, payload: tuple[bytes, ...] | list[bytes], t_ns: int | None,
                topic: str | None = None) -> list[bytes]:
        return encode(msg, seq=next(self._seq), epoch=self.epoch,
                      t_ns=self.clock.now_ns() if t_ns is None else t_ns, src=self.name, payload=payload,
                      after=dict(self.handled_from) if self.handled_from else None, topic=topic)

    def publish(self, msg: Message, payload: tuple[bytes, ...] | list[bytes] = (), t_ns: int | None = None,
                topic: str | None = None) -> None:
        frames = self._frames(msg, payload, t_ns, topic)
        with self._lock:
            if msg.RELIABLE:
                self._outbox.add(msg.id, frames)  # type: ignore[attr-defined]
            self._pub.send_multipart(frames, copy=False)
            self.sent += 1

    def send_frames(self, frames: list[bytes]) -> None:
        """Publish frames already encoded (re-sends of reliable messages, bus probes)."""
        with self._lock:
            self._pub.send_multipart(frames)

    def unacked(self) -> list[tuple[str, list[bytes]]]:
        """Reliable messages sent and not yet acknowledged: (id, encoded frames), oldest first."""
        with self._lock:
            return [(msg_id, list(frames)) for msg_id, frames in self._outbox.pending()]

    def send_again(self, msg_id: str, frames: list[bytes]) -> None:
        """Send a reliable message an earlier life of this node sent and never saw acknowledged.

        Same id, same frames: a receiver that already handled it acknowledges it again and drops it."""
        with self._lock:
            self._outbox.add(msg_id, frames)
            self._pub.send_multipart(with_seq(frames, next(self._seq)))

    def resend_due(self) -> None:
        """Re-send every reliable message whose acknowledgement is overdue (under the lock the senders take)."""
        with self._lock:
            for frames in self._outbox.due():
                self._pub.send_multipart(with_seq(frames, next(self._seq)))

    def ack(self, msg_id: str, msg_type: str, sender: str, held: bool = False) -> None:
        """Acknowledge a reliable message to the node that sent it (on its own topic, ack.<sender>)."""
        self.publish(m.Ack(msg_id, msg_type, self.name, held), topic=topic_of(m.Ack, sender))

    def hold_ack(self, msg_id: str, msg_type: str, sender: str) -> None:
        """From `on_message`: do not acknowledge this reliable message on receipt, but when `release_ack` says
        its work is done; until then its sender keeps it and sends it again, to a restarted node too."""
        self._held[msg_id] = (msg_type, sender)

    def holds(self, msg_id: str) -> bool:
        return msg_id in self._held

    def release_ack(self, msg_id: str) -> None:
        held = self._held.pop(msg_id, None)
        if held is not None:
            self.ack(msg_id, *held)

    def held(self) -> list[str]:
        return list(self._held)

    def control(self, msg: Message) -> None:
        with self._lock:
            self._ctl.send_multipart(self._frames(msg, (), None))

    @contextlib.contextmanager
    def busy(self, bound_s: float) -> Iterator[None]:
        """Around a step that may block the loop longer than the supervisor's short hang limit (a model step):
        the supervisor waits up to `bound_s` for it, and applies the short limit again once it is over."""
        self.control(m.Heartbeat(self.name, {}, busy_s=float(bound_s)))
        try:
            yield
        finally:
            self.control(m.Heartbeat(self.name, {}, busy_s=0.0))

    def new_id(self) -> str:
        return f"{self.name}-{uuid.uuid4().hex[:12]}"

    def interrupt(self, reason: str, onset_ns: int | None = None) -> int:
        """Take the floor from older speech: bump the epoch and tell every other node (the supervisor relays)."""
        self.epoch += 1
        self.control(m.Interrupt(self.epoch, reason, onset_ns, self.clock.now_ns()))
        return self.epoch


class Node:
    """Base class. Override `setup`, `on_message`, `tick`, `on_interrupt`, `close` as needed."""

    name = "node"  # what this node is: the message registry derives the topics it receives from it
    settings_type: ClassVar[type | None] = None  # the dataclass its settings arrive as (None: a plain dict)
    hears_everything: ClassVar[bool] = False  # subscribe to every topic on the bus (the recorder)
    busy_s = 0.0  # a node whose every handler may block this long says so here; better: `io.busy` around the step

    def __init__(self, io: NodeIO, settings: Any, restore: dict) -> None:
        self.io = io
        self.settings = settings
        self.restore = restore
        self.done = False  # set when this node's part of the session is complete
        self.stop = False  # set to leave the loop at once
        self.tick_soon = False  # set by a handler: call `tick` right after this message, not when it was due

    def setup(self) -> None:
        """Heavy set-up (models, devices) before the node reports ready."""

    def start(self) -> None:
        """Called once the supervisor says every node is ready."""

    def on_message(self, env: Envelope) -> None:
        """A data message on a subscribed topic (reliable ones are already de-duplicated)."""

    @classmethod
    def topics(cls) -> tuple[str, ...]:
        """The bus topics this node subscribes to: every message type that names it as a receiver."""
        return ("",) if cls.hears_everything else topics_for(cls.name)

    def on_interrupt(self, msg: m.Interrupt, t_ns: int) -> None:
        """The epoch moved on to `msg.epoch` at session time `t_ns`: drop everything older."""

    def tick(self) -> float | None:
        """Periodic work; return seconds until the next call (None: only on messages)."""
        return None

    def stats(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        """Release devices and files; called on every exit path."""
