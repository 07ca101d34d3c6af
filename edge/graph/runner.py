"""The loop that runs one node (edge/graph/node.py): handshake, then the poll loop, then clean-up.

The loop polls control first, then data; keeps heartbeats, re-sends
unacknowledged reliable messages and calls `tick` when the node asks.
A malformed message is counted and dropped; a node never crashes on one.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any

import zmq

from edge import messages as m
from edge.clock import Clock, MonotonicClock, VirtualClock
from edge.graph.endpoints import Endpoints
from edge.graph.node import DATA_HWM, Node, NodeIO, NodeSpec
from edge.graph.plain import from_plain
from edge.graph.proxy_topics import ProxyTopics
from edge.graph.reliable import Dedup, Outbox
from edge.graph.two_paths import TwoPaths
from edge.wire import Envelope, Rejects, WireError, acknowledger, decode, encode, receives, topic_of
from edge.wire.envelope import peek

log = logging.getLogger(__name__)

INTERRUPT_WAIT_S = 5.0  # virtual clock: how long data of a new epoch waits for its Interrupt on the control socket


class NodeRunner:
    """Runs one node: handshake, then the poll loop, then clean-up."""

    def __init__(self, spec: NodeSpec, node_cls: type[Node], context: zmq.Context | None = None) -> None:
        self.spec = spec
        self.node_cls = node_cls
        self.ctx = context or zmq.Context.instance()
        self.rejects = Rejects(spec.name)
        self.dedup = Dedup()
        self.outbox = Outbox()
        self.clock: Clock = VirtualClock() if spec.virtual_clock else MonotonicClock(spec.clock_origin_ns)
        self.handled = 0
        self.pending: list[m.Interrupt] = []  # virtual clock: interrupts waiting for the data of their epoch
        self.paths = TwoPaths()  # direct bus: one copy of each message handled
        self.direct: zmq.Socket | None = None  # direct bus: the subscriber on the other nodes' own sockets
        self.sub: zmq.Socket | None = None  # the subscriber on the proxy
        self.routes: ProxyTopics | None = None  # direct bus: which topics are taken off the proxy (proven senders)
        self.peers = frozenset(spec.peers)

    def run(self) -> None:
        ep = Endpoints(**self.spec.endpoints)
        ctl = self.ctx.socket(zmq.DEALER)
        ctl.setsockopt(zmq.IDENTITY, self.spec.name.encode())
        ctl.setsockopt(zmq.LINGER, 500)
        ctl.connect(ep.control)
        pub = self.ctx.socket(zmq.PUB)
        pub.setsockopt(zmq.SNDHWM, DATA_HWM)
        pub.setsockopt(zmq.LINGER, 1000)
        pub.connect(ep.bus_in)
        sub = self.ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.RCVHWM, DATA_HWM)
        sub.setsockopt(zmq.MAXMSGSIZE, 64 * 1024 * 1024)
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(ep.bus_out)
        direct: zmq.Socket | None = None
        if ep.direct:
            pub.bind(ep.direct_of(self.spec.name))  # also straight to the nodes that subscribe here
            if not self.node_cls.hears_everything:  # the recorder keeps the proxy's one order of everything
                direct = self._direct_sub(ep, self.node_cls.topics())
        io = NodeIO(self.spec.name, pub, ctl, self.clock, self.outbox, self.spec.restarts)
        settings_type = self.node_cls.settings_type
        settings = from_plain(settings_type, self.spec.config) if settings_type else self.spec.config
        node = self.node_cls(io, settings, self.spec.restore)
        for t in node.topics():
            sub.setsockopt(zmq.SUBSCRIBE, t.encode())
        self.direct, self.sub = direct, sub
        if direct is not None:
            self.routes = ProxyTopics(node.topics(), self.spec.name, self.spec.peers)
        try:
            io.control(m.Hello(self.spec.name, os.getpid(), self.spec.restarts))
            t0 = time.monotonic()
            try:
                node.setup()
            except Exception as exc:  # a missing device or model: restarting will not help
                log.error("%s could not start: %s", self.spec.name, exc)
                io.control(m.Fatal(self.spec.name, str(exc) or type(exc).__name__))
                time.sleep(0.2)  # let the message leave before the sockets close
                return
            self._probe(io, sub, node.name)
            io.control(m.Ready(self.spec.name, (time.monotonic() - t0) * 1e3, float(node.busy_s)))
            if not self._await_start(ctl, io):
                return
            with io.busy(self.spec.start_timeout_s):  # start() may still load things (capture's detector)
                node.start()
            self._loop(node, io, ctl, sub)
        finally:
            try:
                node.close()
            finally:
                for s in (sub, pub, ctl, direct):
                    if s is not None:
                        s.close()

    def _direct_sub(self, ep: Endpoints, topics: tuple[str, ...]) -> zmq.Socket:
        """A second subscriber, connected to every node's own PUB: the one-hop path (see two_paths).
        Subscribed before connecting, so each sender gets every subscription in one batch."""
        s = self.ctx.socket(zmq.SUB)
        s.setsockopt(zmq.RCVHWM, DATA_HWM)
        s.setsockopt(zmq.MAXMSGSIZE, 64 * 1024 * 1024)
        s.setsockopt(zmq.LINGER, 0)
        probe = topic_of(m.Probe, self.spec.name)
        for t in topics:
            if t != probe:  # the probe checks the proxy's path
                s.setsockopt(zmq.SUBSCRIBE, t.encode())
        for peer in self.spec.peers:
            s.connect(ep.direct_of(peer))
        return s

    def _probe(self, io: NodeIO, sub: zmq.Socket, node_name: str) -> None:
        """Publish to ourselves until it comes back: the bus path is live before we say ready."""
        deadline = time.monotonic() + 10.0
        nonce = 0
        topic = topic_of(m.Probe, node_name)
        while time.monotonic() < deadline:
            nonce += 1
            io.send_frames(encode(m.Probe(self.spec.name, nonce), seq=0, epoch=0, t_ns=0, src=self.spec.name,
                                  topic=topic))
            if sub.poll(50):
                while sub.poll(0):
                    frames = sub.recv_multipart()
                    if frames[0] == topic.encode():
                        return
        raise RuntimeError(f"node {self.spec.name} could not reach the bus within 10 s")

    def _await_start(self, ctl: zmq.Socket, io: NodeIO) -> bool:
        deadline = time.monotonic() + self.spec.start_timeout_s
        next_hb = 0.0
        while time.monotonic() < deadline:
            if time.monotonic() >= next_hb:
                io.control(m.Heartbeat(self.spec.name, {"phase": "waiting"}))
                next_hb = time.monotonic() + self.spec.heartbeat_s
            if ctl.poll(int(self.spec.heartbeat_s * 1000)):
                env = self._decode(ctl.recv_multipart())
                if env is None:
                    continue
                if isinstance(env.msg, m.Start):
                    io.epoch = max(io.epoch, env.msg.epoch)
                    if isinstance(self.clock, MonotonicClock) and env.msg.origin_ns:
                        self.clock.origin_ns = env.msg.origin_ns  # the session clock starts now
                    return True
                if isinstance(env.msg, m.Shutdown):
                    return False
        log.error("%s: no start from the supervisor within %.0f s", self.spec.name, self.spec.start_timeout_s)
        return False

    def _decode(self, frames: list[bytes]) -> Envelope | None:
        try:
            return decode(frames)
        except WireError as err:
            self.rejects.add(err)
            return None

    def _loop(self, node: Node, io: NodeIO, ctl: zmq.Socket, sub: zmq.Socket) -> None:
        poller = zmq.Poller()
        poller.register(ctl, zmq.POLLIN)
        poller.register(sub, zmq.POLLIN)
        if self.direct is not None:
            poller.register(self.direct, zmq.POLLIN)
        hb_s = self.spec.heartbeat_s
        next_hb = 0.0
        next_tick = time.monotonic()
        announced_done = False
        while not node.stop:
            now = time.monotonic()
            if now >= next_hb:
                io.control(m.Heartbeat(self.spec.name, self._stats(node, io)))
                next_hb = now + hb_s
            if now >= next_tick:
                delay = node.tick()
                next_tick = now + (delay if delay is not None else 3600.0)
            if node.done and not announced_done:
                io.control(m.Finished(self.spec.name))
                announced_done = True
            io.resend_due()
            wake = min(next_hb, next_tick, self.outbox.next_deadline() or next_hb)
            timeout_ms = max(0, int((wake - time.monotonic()) * 1000))
            events = dict(poller.poll(timeout_ms))
            if ctl in events:
                while ctl.poll(0):
                    self._on_control(node, io, ctl.recv_multipart())
                    if node.stop:
                        return
            for s in (self.direct, sub):
                if s is None or s not in events:
                    continue
                # Bounded batch, then back to control: control never waits behind a flood of data.
                for _ in range(64):
                    try:
                        frames = s.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    self._on_data(node, io, ctl, frames, s is self.direct)
                    if ctl.poll(0):
                        break
            if node.tick_soon:
                node.tick_soon = False
                next_tick = min(next_tick, time.monotonic())

    def _on_control(self, node: Node, io: NodeIO, frames: list[bytes]) -> None:
        env = self._decode(frames)
        if env is None:
            return
        msg = env.msg
        if isinstance(msg, m.Shutdown):
            node.stop = True
        elif isinstance(msg, m.LifeEnded):
            self.outbox.holder_gone(msg.node)
            if self.routes is not None:
                self.paths.ended(msg.node)
                self._reroute()
            io.control(m.ProxyAgain(self.spec.name, msg.node))  # the supervisor starts its next life then
        elif isinstance(msg, m.Interrupt) and msg.epoch > io.epoch:
            if isinstance(self.clock, VirtualClock):
                # Held until the data stream reaches its epoch: how control and data interleave depends on
                # timing, the order of the data does not, so a virtual-clock session replays the same.
                self.pending.append(msg)
            else:
                self._interrupt(node, io, msg, self.clock.now_ns())  # at once: it never waits behind data

    def _interrupt(self, node: Node, io: NodeIO, msg: m.Interrupt, t_ns: int) -> None:
        io.epoch = msg.epoch
        node.on_interrupt(msg, t_ns)

    def _catch_up(self, node: Node, io: NodeIO, ctl: zmq.Socket, env: Envelope) -> None:
        """Virtual clock: apply every interrupt up to this message's epoch, at the sender's decision time."""
        deadline = time.monotonic() + INTERRUPT_WAIT_S
        next_hb = 0.0
        while not any(p.epoch >= env.epoch for p in self.pending) and time.monotonic() < deadline and not node.stop:
            if time.monotonic() >= next_hb:  # waiting is not hanging: the supervisor keeps hearing from us
                io.control(m.Heartbeat(self.spec.name, {}))
                next_hb = time.monotonic() + self.spec.heartbeat_s
            if ctl.poll(20):  # the data outran the supervisor's relay: the Interrupt is on its way
                while ctl.poll(0):
                    self._on_control(node, io, ctl.recv_multipart())
        for msg in sorted(self.pending, key=lambda p: p.epoch):
            if io.epoch < msg.epoch <= env.epoch:
                self._interrupt(node, io, msg, msg.t_ns)
        self.pending = [p for p in self.pending if p.epoch > io.epoch]
        if env.epoch > io.epoch and not node.stop:
            log.warning("%s: no interrupt came for epoch %d within %.0f s; moving on at %.3f s", self.spec.name,
                        env.epoch, INTERRUPT_WAIT_S, env.t_ns / 1e9)
            self._interrupt(node, io, m.Interrupt(env.epoch, "epoch moved on", None, env.t_ns), env.t_ns)

    def _on_data(self, node: Node, io: NodeIO, ctl: zmq.Socket, frames: list[bytes], direct: bool = False) -> None:
        if self.direct is not None:
            origin = peek(frames)  # the second copy is dropped before the cost of decoding it
            # Only the graph's nodes publish directly; the supervisor's and outside clients' messages (their
            # numbers are their own affair) come once, through the proxy.
            if origin is not None and origin[2] != m.Probe.TYPE and origin[0] in self.peers:
                src, seq, _ = origin
                handle = self.paths.accept(src, seq, direct)
                if self.paths.changed:
                    self._reroute()
                if not handle:
                    return  # the other path's copy was handled
        env = self._decode(frames)
        if env is None:
            return
        msg = env.msg
        if self.direct is not None and env.src != io.name and env.seq > io.handled_from.get(env.src, -1):
            io.handled_from[env.src] = env.seq  # named in what this node sends next (see NodeIO.handled_from)
        if isinstance(msg, m.Ack):
            if msg.held:
                self.outbox.held(msg.id, msg.by)
            else:
                self.outbox.ack(msg.id)
            return
        if isinstance(msg, m.Probe):
            return
        if isinstance(self.clock, VirtualClock):
            self.clock.advance_to(env.t_ns)  # message stamps drive virtual time
            if env.epoch > io.epoch:
                self._catch_up(node, io, ctl, env)
        if msg.RELIABLE:
            if not receives(type(msg), node.name):
                node.on_message(env)  # an observer (the recorder): sees every copy, never acknowledges
                return
            # A reliable message may have several receivers, but its sender keeps one outbox entry and drops
            # it at the first Ack. So only the first receiver named acknowledges: the message is the sender's
            # request to that node (speech plays SpeakText's words) and is re-sent until that node has it.
            # The others hear the re-sends on the same topic and de-duplicate them; nobody waits for them.
            acks = acknowledger(type(msg)) == node.name
            msg_id = msg.id  # type: ignore[attr-defined]
            if self.dedup.seen(msg_id):
                if acks:  # a held one is acknowledged for good when its work is done
                    io.ack(msg_id, msg.TYPE, env.src, held=io.holds(msg_id))
                return
            node.on_message(env)  # handled (e.g. stored durably) before it is acknowledged
            self.dedup.remember(msg_id)
            if acks:
                io.ack(msg_id, msg.TYPE, env.src, held=io.holds(msg_id))
        else:
            node.on_message(env)
        self.handled += 1

    def _reroute(self) -> None:
        """Take the topics whose senders are all proven off the proxy; put back those whose are not."""
        assert self.routes is not None and self.sub is not None
        self.paths.changed = False
        drop, back = self.routes.update(self.paths.proven)
        for t in back:
            self.sub.setsockopt(zmq.SUBSCRIBE, t.encode())
        for t in drop:
            self.sub.setsockopt(zmq.UNSUBSCRIBE, t.encode())

    def _stats(self, node: Node, io: NodeIO) -> dict[str, Any]:
        return {"handled": self.handled, "sent": io.sent, "rejected": self.rejects.as_dict(),
                "unacked": len(self.outbox), "resent": self.outbox.resent,
                "duplicates": self.dedup.duplicates, **({"paths": self._path_stats()} if self.direct else {}),
                **node.stats()}

    def _path_stats(self) -> dict[str, int]:
        return {**self.paths.stats(), "off_proxy": len(self.routes.off) if self.routes is not None else 0}
