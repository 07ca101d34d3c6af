"""Every harness has a calculator and the clock: sums and the time go to them, without a model; the rest does not."""
from __future__ import annotations

from datetime import datetime

import pytest

from edge.clock import VirtualClock
from edge.harness.assemble import build_harness
from edge.harness.builtin import ClockCapability, clock_answer
from edge.messages import WorkEvent
from harness_helpers import Emitted, ScriptedCapability
from test_harness_home import finish, said


@pytest.fixture()
def built(tmp_path):
    clock, emit = VirtualClock(), Emitted()
    # The default router (general-only), with a scripted stand-in for the general capability's model.
    built = build_harness({"retries": 0}, tmp_path, clock, emit)
    built.harness.registry.add(ScriptedCapability("general", "Here is a story about a lighthouse keeper.", 0.1))
    yield built, clock, emit
    built.close()


def _routed_to(emit: Emitted, work_id: str) -> str:
    [event] = [e for e in emit if isinstance(e, WorkEvent) and e.work_id == work_id and e.detail.startswith("routed")]
    return event.info.get("capability", "")


def test_spoken_sums_and_the_clock_are_answered_by_the_builtin_capabilities(built):
    b, clock, emit = built
    assert said(finish(b, clock, "w1", "Hey, what is twelve times seven?")) == "12 times 7 is 84."
    assert said(finish(b, clock, "w2", "How many centimeters are in five inches?")) == \
        "5 inches is 12.7 centimeters."
    before = datetime.now().astimezone()
    text = said(finish(b, clock, "w3", "What time is it?"))
    after = datetime.now().astimezone()
    assert text in {clock_answer("time", before), clock_answer("time", after)}
    assert said(finish(b, clock, "w4", "Tell me a story about a lighthouse keeper.")).startswith("Here is a story")
    assert [_routed_to(emit, w) for w in ("w1", "w2", "w3", "w4")] == ["calculator", "calculator", "clock", "general"]


def test_the_clock_says_time_day_and_date():
    now = datetime(2026, 12, 1, 18, 5)
    clock = ClockCapability(now=lambda: now)
    assert clock_answer("time", now) == "It's 6:05 in the evening."
    assert clock_answer("day", now) == "Today is Tuesday."
    assert clock_answer("date", now) == "Today is Tuesday, December 1, 2026."
    assert clock.claim("what's the date today") == {"question": "what's the date today"}
    assert clock.claim("What time is it in Tokyo?") is None
