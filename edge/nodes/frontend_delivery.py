"""A harness result's delivery, from the frontend node's side: the one owner of what became of each result.

A result arrives (`received`), unless the user asked something new before it was released; it may be dropped
as stale when a new question comes before it is spoken (`drop_stale`), or when the user says "stop" before it
is (`drop_stopped`); its speech is tracked piece by piece
(`spoken`), and once every piece has been played after its turn closed, the harness is told it was delivered
(`played` says when to send `Delivered`). Its state goes into the frontend node's step files.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from edge import messages as m
from edge.frontend.base import ResultToSay

STALE = "stale: the user asked something new before it was spoken"  # the harness's words for the same drop
STOPPED = "the user said stop before it was said"  # ... and for the work a "stop" gives up


@dataclass
class _Reply:
    """The speech of one harness result: delivered once every piece has been played."""

    work_id: str
    speaks: set[str] = field(default_factory=set)
    closed: bool = False


class ResultDelivery:
    def __init__(self) -> None:
        self.replies: dict[str, _Reply] = {}
        self.speak_to_backend: dict[str, str] = {}
        self.backend_texts: dict[str, tuple[str, str]] = {}  # result id -> (work id, text)
        # Results handed to the frontend and not yet spoken that a new question makes stale: id -> when asked.
        self.asked: dict[str, int] = {}
        self.opened: dict[str, int] = {}  # ... and those a "stop" gives up: id -> when their request was made
        self.new_turn_ns = -1  # where the newest new question the frontend heard ended
        self.dropped: dict[str, str] = {}  # results dropped since the last decision, which journals them: id -> why

    def received(self, msg: m.BackendResult) -> ResultToSay | None:
        """The result to hand to the frontend, or None when it is stale on arrival."""
        if 0 <= msg.asked_ns < self.new_turn_ns:
            self.dropped[msg.id] = STALE  # released before the harness heard the new question
            return None
        self.backend_texts[msg.id] = (msg.work_id, msg.text)
        if msg.asked_ns >= 0:
            self.asked[msg.id] = msg.asked_ns
        if msg.opened_ns >= 0:
            self.opened[msg.id] = msg.opened_ns
        return ResultToSay(msg.id, msg.text, msg.work_id)

    def drop_stale(self, turn_end_ns: int | None, speaking: str, withdraw: Callable[[str], bool]) -> None:
        """The user asked something new (their turn ended at `turn_end_ns`): the frontend drops the answers to
        earlier requests it holds and has not started to speak, as the harness drops the work it still has."""
        if turn_end_ns is None:
            return
        self.new_turn_ns = max(self.new_turn_ns, turn_end_ns)
        for rid, asked_ns in list(self.asked.items()):
            if asked_ns >= turn_end_ns or rid == speaking:
                continue
            del self.asked[rid]  # held or not (a frontend may drop a progress notice itself), done with
            self.opened.pop(rid, None)
            if withdraw(rid):
                self.backend_texts.pop(rid, None)
                self.dropped[rid] = STALE

    def drop_stopped(self, said_ns: int | None, speaking: str, withdraw: Callable[[str], bool]) -> None:
        """The user said "stop" (heard until `said_ns`): a held answer to the request it cut short (the newest
        asked before it) stays cut, as the harness gives that request's work up; older ones are left alone."""
        if said_ns is None:
            return
        before = [opened for rid, opened in self.opened.items() if opened < said_ns and rid != speaking]
        if not before:
            return
        newest = max(before)
        for rid, opened in list(self.opened.items()):
            if opened == newest and rid != speaking:
                del self.opened[rid]
                self.asked.pop(rid, None)
                if withdraw(rid):
                    self.backend_texts.pop(rid, None)
                    self.dropped[rid] = STOPPED

    def work_of(self, result_id: str) -> str:
        return self.backend_texts.get(result_id, ("", ""))[0]

    def take_dropped(self) -> dict[str, str]:
        """The results dropped since the last decision (for its journal record), forgotten here."""
        dropped, self.dropped = self.dropped, {}
        return dropped

    def spoken(self, result_id: str, speak_id: str) -> None:
        """A piece of the result's speech went to the voice."""
        self.asked.pop(result_id, None)
        self.opened.pop(result_id, None)
        reply = self.replies.setdefault(result_id, _Reply(self.work_of(result_id)))
        reply.speaks.add(speak_id)
        self.speak_to_backend[speak_id] = result_id

    def turn_closed(self) -> None:
        """The turn ended (or was cut): no more pieces join the results being spoken."""
        for reply in self.replies.values():
            reply.closed = True

    def played(self, ack: m.PlaybackAck) -> tuple[str, str] | None:
        """A piece was played: (work id, result id) to tell the harness of when it was its result's last."""
        bid = self.speak_to_backend.get(ack.speak_id)
        if bid is None or not ack.last:
            return None
        del self.speak_to_backend[ack.speak_id]
        reply = self.replies.get(bid)
        if reply is None:
            return None
        reply.speaks.discard(ack.speak_id)
        if not (reply.closed and not reply.speaks):
            return None
        del self.replies[bid]
        self.backend_texts.pop(bid, None)
        return reply.work_id or bid, bid

    def state(self) -> dict[str, Any]:
        return {"replies": {bid: [r.work_id, sorted(r.speaks), r.closed] for bid, r in self.replies.items()},
                "speak_to_backend": self.speak_to_backend,
                "backend_texts": {rid: list(v) for rid, v in self.backend_texts.items()},
                "asked": self.asked, "opened": self.opened, "new_turn_ns": self.new_turn_ns, "dropped": self.dropped}

    def restore(self, st: dict[str, Any]) -> None:
        self.replies = {bid: _Reply(work_id, set(speaks), closed) for bid, (work_id, speaks, closed)
                        in st.get("replies", {}).items()}
        self.speak_to_backend = dict(st.get("speak_to_backend", {}))
        self.backend_texts = {rid: (w, t) for rid, (w, t) in st.get("backend_texts", {}).items()}
        self.asked = {rid: int(t) for rid, t in st.get("asked", {}).items()}
        self.opened = {rid: int(t) for rid, t in st.get("opened", {}).items()}
        self.new_turn_ns = int(st.get("new_turn_ns", -1))
        self.dropped = dict(st.get("dropped", {}))
