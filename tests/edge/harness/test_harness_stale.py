"""A new user question drops the open-ended answer to an earlier one (it would land in the new question's place)."""
from __future__ import annotations

from edge import messages as m
from edge.harness import states as S
from edge.nodes.harness import asked_anew
from harness_helpers import S as SEC, ScriptedCapability, advance, listen_boundaries, make_harness


def _harness(tmp_path, **settings):
    general = ScriptedCapability("general", "To make something, you need a plan.", duration_s=8.0)
    lookup = ScriptedCapability("lookup", "It is sunny in Paris.", duration_s=8.0)
    rules = [{"match": "weather", "capability": "lookup", "arguments": {"request": "weather"}}]
    return make_harness(tmp_path, [general, lookup], rules, **settings)


def test_a_new_question_drops_the_general_answer_to_the_last_one_but_not_a_lookup(tmp_path):
    h, clock, em = _harness(tmp_path)
    h.accept("misheard", "What may you need to make?", 1 * SEC, 0)
    h.accept("weather", "Find the weather in Paris.", 1 * SEC, 0)
    advance(h, clock, 3.0)
    assert h.new_turn(4 * SEC) == ["misheard"]
    h.settle()
    h.poll()
    assert em.states("misheard")[-2:] == [S.CANCELLING, S.CANCELLED]
    why = [e.detail for e in em if isinstance(e, m.WorkEvent) and e.work_id == "misheard"
           and e.state == S.CANCELLING]
    assert why == ["stale: the user asked something new before it was spoken"]
    released = listen_boundaries(h, clock, 12)
    assert [r.work_id for r in released] == ["weather"]  # the lookup the user asked for is still spoken


def test_work_for_the_new_question_itself_and_finished_answers_stay(tmp_path):
    h, clock, em = _harness(tmp_path)
    h.accept("now", "Tell me a joke.", 4 * SEC, 0)  # opened when the new turn ended: it is this turn's own
    advance(h, clock, 1.0)
    assert h.new_turn(4 * SEC) == []
    assert h.store.get("now").state == S.RUNNING


def test_a_failure_notice_for_an_earlier_question_is_dropped_too(tmp_path):
    h, clock, em = _harness(tmp_path, timeouts={"general": 2.0})
    h.accept("slow", "What may you need to make?", 0, 0)
    advance(h, clock, 4.0)
    assert h.store.get("slow").state == S.FAILED and h.store.get("slow").notice_state == "pending"
    assert h.new_turn(5 * SEC) == ["slow"]
    assert h.store.get("slow").notice_state == "cancelled"
    assert listen_boundaries(h, clock, 4) == []  # "Sorry, I couldn't finish that" is never said


def test_a_setting_names_the_capabilities_a_new_question_makes_stale(tmp_path):
    h, clock, em = _harness(tmp_path, stale_after_turn=[])
    h.accept("misheard", "What may you need to make?", 1 * SEC, 0)
    advance(h, clock, 1.0)
    assert h.new_turn(4 * SEC) == []


def _decision(user_text: str, info: dict) -> m.ChunkDecision:
    return m.ChunkDecision(7, "listen", "", user_text, False, False, 0, 0, 0, 0.0, info)


def test_which_decisions_are_a_new_question():
    assert asked_anew(_decision("What day is it today?", {"user_end_ns": 5 * SEC})) == 5 * SEC
    assert asked_anew(_decision("Mm-hm.", {"user_end_ns": 5 * SEC})) is None  # a filler is no question
    assert asked_anew(_decision("Stop.", {"user_end_ns": 5 * SEC})) is None
    assert asked_anew(_decision("Yeah, right.", {"barge_in": {"decision": "backchannel"}})) is None
    assert asked_anew(_decision("What day is it?", {})) is None  # a frontend that does not say where the turn ended
