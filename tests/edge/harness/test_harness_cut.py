"""A reply the user cut (a barge-in: they said stop or asked something new) is not offered again, and "stop"
gives up the pending work of the request it cut short; a reply cut for the answer to the holding phrase is."""
from __future__ import annotations

from types import SimpleNamespace

from edge import messages as m
from edge.harness import states as S
from edge.harness.outage import Outage
from edge.harness.returns import CUT_BY_USER, STOPPED
from edge.nodes.harness import HarnessNode
from harness_helpers import ScriptedCapability, advance, listen_boundaries, make_harness


def node_over(h) -> HarnessNode:
    """The harness node's wiring of interrupts and chunk decisions, over a harness on a virtual clock."""
    node = object.__new__(HarnessNode)
    node.built, node.released, node.outage, node.refusals = SimpleNamespace(harness=h), 0, Outage(), 0
    return node


def heard(text: str, end_ns: int, interrupt: bool = False) -> SimpleNamespace:
    info = {"user_end_ns": end_ns, "barge_in": {"decision": "interrupt", "decided_ns": end_ns}}
    return SimpleNamespace(msg=m.ChunkDecision(9, "listen", "", text, False, interrupt, 0, 0, 0, 0.0, info))


def events(em, work_id: str) -> list[tuple[str, str]]:
    return [(e.state, e.detail) for e in em if isinstance(e, m.WorkEvent) and e.work_id == work_id]


def last_event(em, work_id: str) -> tuple[str, str]:
    return events(em, work_id)[-1]


def test_an_answer_the_user_cut_with_a_new_question_is_not_said_again(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.2)], max_releases=3)
    node = node_over(h)
    h.accept("w", "tell me about Rome", 0, 0)
    first = listen_boundaries(h, clock, 2)[0]
    h.on_speak(first.release_id)
    node.on_interrupt(m.Interrupt(1, "barge-in"), clock.now_ns())
    node.on_message(heard("What time is it?", clock.now_ns(), interrupt=True))
    assert listen_boundaries(h, clock, 6) == [], "the cut answer was offered again"
    assert last_event(em, "w") == (S.CANCELLED, CUT_BY_USER)


def test_a_reply_cut_for_the_answer_to_the_holding_phrase_is_still_offered_again(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.2)], max_releases=3)
    h.accept("w", "x", 0, 0)
    first = listen_boundaries(h, clock, 2)[0]
    h.on_speak(first.release_id)
    node_over(h).on_interrupt(m.Interrupt(1, "answer ready"), clock.now_ns())
    assert [c.release_id for c in listen_boundaries(h, clock, 3)] == ["w:r2"]


def test_stop_gives_up_the_request_it_cut_short_and_only_that_one(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=5.0)])
    node = node_over(h)
    h.accept("old", "an earlier request", 0, 0)
    advance(h, clock, 1)
    h.accept("new", "what is the weather in Paris", clock.now_ns(), 1)
    advance(h, clock, 1)
    node.on_interrupt(m.Interrupt(1, "barge-in"), clock.now_ns())
    node.on_message(heard("Stop.", clock.now_ns(), interrupt=True))
    advance(h, clock, 1)
    assert (S.CANCELLING, STOPPED) in events(em, "new") and h.store.get("new").state == S.CANCELLED
    assert h.store.get("old").state not in S.TERMINAL  # only the request the stop cut short
    released = listen_boundaries(h, clock, 8)
    assert [c.work_id for c in released if c.kind == "result"] == ["old"]


def test_wait_a_second_keeps_the_work(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=2.0)])
    h.accept("w", "x", 0, 0)
    advance(h, clock, 1)
    node_over(h).on_message(heard("Wait a second.", clock.now_ns()))
    assert h.store.get("w").state not in S.TERMINAL
