"""Timers and reminders: answered at once, rung when due on the session clock, kept across a restart, never
dropped as stale, never timed out, never "still checking"; cancelled and asked about in words."""
from __future__ import annotations

from datetime import datetime

import pytest

from edge import messages as m
from edge.clock import VirtualClock
from edge.harness import states as S
from edge.harness.assemble import build_harness
from edge.harness.capability import Later
from edge.harness.fast_route import FastRouter
from edge.harness.router import Choice
from edge.harness.timers import TimerCapability, say_duration, seconds_until
from edge.language.timer_words import ClockTime, timer_request
from harness_helpers import Emitted, ScriptedCapability, advance
from test_harness_home import finish, said

SEC = 1_000_000_000


def _build(tmp_path, clock=None, emit=None):
    clock, emit = clock or VirtualClock(), emit if emit is not None else Emitted()
    # The default router: claims, then general; every release at a gated boundary, as `listen` counts them.
    built = build_harness({"retries": 0, "gate": {"release_awaited": 0}}, tmp_path, clock, emit)
    built.harness.registry.add(ScriptedCapability("general", "Paris is the capital of France.", 0.5))
    return built, clock, emit


@pytest.fixture()
def built(tmp_path):
    b, clock, emit = _build(tmp_path)
    yield b, clock, emit
    b.close()


def listen(h, clock, seconds: float) -> list[tuple[float, m.BackendResult]]:
    """Idle listen boundaries every second for `seconds`; every released result is spoken and played at once.
    Returns (session seconds, result) for each release."""
    out = []
    emitted = h.emit
    for _ in range(int(seconds)):
        advance(h, clock, 1.0, step=0.5)
        if h.boundary(idle=True) is not None:
            r = emitted.results()[-1]
            out.append((clock.now_ns() / SEC, r))
            h.on_speak(r.id)
            h.on_delivered(r.work_id, r.id)
    return out


def test_a_timer_is_acknowledged_at_once_and_rings_when_due(built):
    b, clock, emit = built
    h = b.harness
    h.accept("w1", "Set a timer for two minutes, please.", 0, 0)
    got = listen(h, clock, 3)
    assert [(r.text, r.kind) for _, r in got] == [("Timer set for 2 minutes.", "result")]
    got = listen(h, clock, 115)  # to 118 s: nothing more is said meanwhile (no "still checking")
    assert got == []
    got = listen(h, clock, 6)
    assert [r.text for _, r in got] == ["Your 2-minute timer is done."]
    t, ring = got[0]
    assert 120 <= t <= 122 and ring.asked_ns == -1 and ring.expires_ns > 120 * SEC
    assert not [r for r in emit.results() if r.kind == "progress"]
    assert h.store.get(ring.work_id).state == S.DELIVERED and h.store.get("w1").state == S.DELIVERED
    assert ring.work_id == "w1-later"
    assert len([r for r in emit.results() if r.work_id == ring.work_id]) == 1


def test_a_question_asked_meanwhile_does_not_cancel_it(built):
    b, clock, emit = built
    h = b.harness
    h.accept("w1", "Remind me in ten seconds to check the oven.", 0, 0)
    assert [r.text for _, r in listen(h, clock, 2)] == ["I'll remind you to check the oven in 10 seconds."]
    h.new_turn(clock.now_ns())  # the user asks something else (the harness node calls this): what general work
    h.accept("w2", "What is the capital of France?", clock.now_ns(), 3)  # was open before it would be stale
    got = listen(h, clock, 12)
    assert [r.text for _, r in got] == ["Paris is the capital of France.", "It's time to check the oven."]
    assert 10 <= got[1][0] <= 12


def test_it_rings_once_at_its_due_time_after_a_restart(tmp_path):
    clock, emit = VirtualClock(), Emitted()
    b, _, _ = _build(tmp_path, clock, emit)
    b.harness.accept("w1", "Set a timer for 90 seconds.", 0, 0)
    assert [r.text for _, r in listen(b.harness, clock, 2)] == ["Timer set for 90 seconds."]
    advance(b.harness, clock, 30)
    b.close()  # as a kill leaves it: nothing is changed at close
    advance_clock = clock.now_ns() + 20 * SEC  # down for 20 s
    clock.advance_to(advance_clock)
    b2, _, emit2 = _build(tmp_path, clock)
    b2.harness.resume()
    got = listen(b2.harness, clock, 45)
    assert [r.text for _, r in got] == ["Your 90-second timer is done."]
    assert 90 <= got[0][0] <= 92  # its due time, not 90 s after the restart
    b2.close()


def test_a_new_session_keeps_the_due_time_on_the_machines_clock(tmp_path):
    """A new session's clock starts at 0 again: the ring is due when the machine's clock says so."""
    class Clock:  # a real clock whose readings the test sets
        virtual = False

        def __init__(self) -> None:
            self.t = 0

        def now_ns(self) -> int:
            return self.t

        def sleep_until(self, t_ns: int) -> None:
            self.t = max(self.t, t_ns)

    wall = [1_000_000.0]
    first = Clock()
    first.t = 500 * SEC
    b, _, _ = _build(tmp_path, first)
    b.harness.wall = lambda: wall[0]
    b.harness.accept("w1", "Set a timer for 5 minutes.", first.t, 0)
    b.harness.settle()
    b.harness.poll()
    assert b.harness.store.get("w1-later").not_before_ns == 800 * SEC
    ack = b.harness.boundary(idle=True)
    b.harness.on_speak(ack.release_id)
    b.harness.on_delivered("w1", ack.release_id)  # "Timer set for 5 minutes." was said in the first session
    b.close()
    wall[0] += 100  # 100 s later the device starts a new session, its clock at 0
    b2, _, _ = _build(tmp_path, Clock())
    b2.harness.wall = lambda: wall[0]
    b2.harness.resume()
    assert b2.harness.store.get("w1-later").not_before_ns == 200 * SEC
    b2.close()
    wall[0] += 3600  # the next session starts an hour later: long past due, it is not said out of the blue
    late, emit3 = Clock(), Emitted()
    b3, _, _ = _build(tmp_path, late, emit3)
    b3.harness.wall = lambda: wall[0]
    b3.harness.resume()
    for _ in range(3):
        late.t += SEC
        assert b3.harness.boundary(idle=True) is None
    item = b3.harness.store.get("w1-later")
    assert (item.state, item.reason) == (S.FAILED, "expired") and not emit3.results()
    b3.close()


def test_how_long_is_left_and_cancel(built):
    b, clock, emit = built
    h = b.harness
    h.accept("w1", "Set a timer for five minutes.", 0, 0)
    h.accept("w2", "Remind me in an hour and a half to call Ana.", 0, 1)
    listen(h, clock, 60)
    h.accept("w3", "How much time is left on my timer?", clock.now_ns(), 2)
    [(_, left)] = listen(h, clock, 2)
    assert left.text == ("Your 5-minute timer has 4 minutes left, and your reminder to call Ana has 1 hour and "
                         "29 minutes left.")  # asked at 60 s
    h.accept("w4", "Cancel the timer.", clock.now_ns(), 3)
    [(_, gone)] = listen(h, clock, 2)
    assert gone.text == "I've cancelled the 5-minute timer. 1 more is still set."
    h.accept("w4b", "Cancel the timer.", clock.now_ns(), 4)  # a reminder is not what was asked to go
    [(_, kept)] = listen(h, clock, 2)
    assert kept.text == "There is no timer to cancel; your reminder to call Ana is still set."
    h.accept("w5", "Cancel the reminder to call Ana.", clock.now_ns(), 4)
    [(_, gone)] = listen(h, clock, 2)
    assert gone.text == "I've cancelled the reminder to call Ana."
    assert listen(h, clock, 300) == []  # neither rings
    assert h.store.get("w1-later").state == S.CANCELLED and h.store.get("w2-later").state == S.CANCELLED
    assert said(finish(b, clock, "w6", "Cancel my timer.")) == "There is no timer or reminder to cancel."
    assert said(finish(b, clock, "w7", "How long is left on the timer?")) == "You have no timers or reminders set."


@pytest.mark.parametrize("request_text, sentence", [
    ("Set a timer for banana minutes.", "Sorry, I couldn't finish that: I can't tell how long 'banana minutes' is; "
                                        "say it like 'set a timer for five minutes' or 'remind me in ten minutes "
                                        "to check the oven'."),
    ("Set a timer, please.", "Sorry, I couldn't finish that: I didn't hear how long the timer should be; say it "
                             "like 'set a timer for five minutes' or 'remind me in ten minutes to check the oven'."),
    ("Set a timer for thirty hours.", "Sorry, I couldn't finish that: 30 hours is longer than a day, the longest "
                                      "I can wait; please set it for a day or less."),
    ("Remind me to call Ana.", "Sorry, I couldn't finish that: I didn't hear when to remind you; say it like 'set "
                               "a timer for five minutes' or 'remind me in ten minutes to check the oven'."),
    ("Set a timer for zero seconds.", "Sorry, I couldn't finish that: a timer needs at least one second; say it "
                                      "like 'set a timer for five minutes' or 'remind me in ten minutes to check "
                                      "the oven'."),
])
def test_a_bad_request_gets_one_clear_sentence_and_sets_nothing(built, request_text, sentence):
    b, clock, _ = built
    item = finish(b, clock, "w1", request_text)
    assert item.state == S.FAILED and said(item) == sentence
    assert b.harness.store.get("w1-later") is None


def test_the_words_are_read_as_people_say_them():
    cases = {
        "Set a timer for two minutes, please.": 120, "A timer for 90 seconds.": 90,
        "Timer for one and a half hours.": 5400, "Set a timer for half an hour.": 1800,
        "Set a 5-minute timer.": 300, "Set a timer for 2 minutes 30 seconds.": 150,
        "Set a timer for an hour and ten minutes.": 4200, "Set a timer for one hundred and twenty seconds.": 120,
        "Remind me to check my oven in a quarter of an hour.": 900, "Set a time for two minutes.": 120,
        "Set a timer for 7:30.": 450,
    }
    for text, seconds in cases.items():
        req = timer_request(text)
        assert req is not None and req.kind == "set" and req.seconds == seconds, (text, req)
    assert timer_request("Remind me in 10 minutes to check my oven, please.").task == "check your oven"
    assert timer_request("Remind me to put the kids in a bath in five minutes.").task == "put the kids in a bath"
    assert timer_request("Remind me at 7:30 to call Ana.").at == ClockTime(7, 30, "")
    assert timer_request("Wake me up at seven thirty in the morning.").at == ClockTime(7, 30, "am")
    assert timer_request("How much time is left on the timer?").kind == "left"
    # Said right after setting one, with no timer named: the model answered by repeating the acknowledgement.
    for text in ("How long is left?", "And how many minutes are left?", "How long have I got left?"):
        assert timer_request(text).kind == "left", text
    assert timer_request("Cancel all my timers.").every
    assert timer_request("Set an alarm for 7.").at == ClockTime(7, 0, "")
    for text in ("What time is it?", "How do I set a timer on my oven?", "What is twelve times seven?",
                 "My kitchen timer is broken.", "Set a time for the meeting.", "Remind me what we talked about.",
                 "Can you remind me who wrote Hamlet?", "How long is the river Nile?",
                 "How long is left in the match tonight?"):
        assert timer_request(text) is None, text
    assert say_duration(90) == "90 seconds" and say_duration(5400) == "1 hour and 30 minutes"


def test_a_clock_time_is_the_next_time_the_clock_shows_it():
    now = datetime(2026, 12, 1, 18, 5)
    assert seconds_until(ClockTime(7, 30, ""), now) == 85 * 60  # 7:30 this evening, not tomorrow morning
    assert seconds_until(ClockTime(7, 30, "am"), now) == (13 * 60 + 25) * 60
    assert seconds_until(ClockTime(18, 0, ""), now) == (24 * 60 - 5) * 60
    cap = TimerCapability(now=lambda: now)
    out = cap._set(timer_request("Remind me at 7:30 to call Ana."))
    assert out.text == "I'll remind you to call Ana at 7:30 in the evening."
    assert out.later.text == "It's 7:30 in the evening: time to call Ana." and out.later.after_s == 85 * 60


def test_the_fast_route_takes_timers_without_a_model(tmp_path):
    class NoModel:
        name = "model"

        def route(self, *a):
            raise AssertionError("the model router was asked")

    b, clock, _ = _build(tmp_path)
    router = FastRouter(NoModel())
    for text in ("Set a timer for two minutes.", "Remind me in ten minutes to check the oven.",
                 "Cancel the timer.", "How long is left on my timer?", "Set a timer for banana minutes."):
        choice = router.route(text, b.harness.registry, [])
        assert isinstance(choice, Choice) and choice.capability == "timer" and choice.path == "claim", text
    b.close()


def test_a_timer_is_not_cut_by_the_capability_timeout_nor_by_a_stale_rule(tmp_path):
    clock, emit = VirtualClock(), Emitted()
    built = build_harness({"retries": 0, "default_timeout_s": 1, "timeouts": {"timer": 1},
                           "stale_after_turn": ["general", "timer"]}, tmp_path, clock, emit)
    h = built.harness
    h.accept("w1", "Set a timer for 30 seconds.", 0, 0)
    listen(h, clock, 2)
    h.new_turn(clock.now_ns())  # even where timers are listed as stale after a new question, the ring is not
    got = listen(h, clock, 31)
    assert [r.text for _, r in got] == ["Your 30-second timer is done."]
    assert [e.state for e in emit if isinstance(e, m.WorkEvent) and e.work_id == "w1-later"] == \
        [S.QUEUED, S.RUNNING, S.COMPLETED, S.DELIVERING, S.DELIVERED]
    built.close()


def test_a_wyoming_transcript_never_sets_a_timer_it_could_not_ring(tmp_path):
    """A Wyoming answer is one reply: a timer set there would never be heard ringing, so it is refused in words."""
    from edge.wyoming.converse import Conversation

    conversation = Conversation({"dir": str(tmp_path), "retries": 0})
    try:
        handled, text = conversation.answer("Set a timer for two minutes.")
        assert not handled and text.startswith("I can't keep a timer") and text.count(".") == 1
        assert conversation.answer("What is twelve times seven?") == (True, "12 times 7 is 84.")
        assert not [i for i in conversation.built.harness.store.all() if i.later]
    finally:
        conversation.close()


def test_a_file_session_waits_for_the_ring_on_session_time_and_names_one_not_yet_due(built):
    """After a file's end, capture listens on for a timer's ring as for any answer owed; on the virtual clock
    without pacing to the real one (nothing runs), and past --answer-wait it says the timer was not yet due."""
    from edge.nodes.capture_tail import END, GO, AnswerWait

    b, clock, emit = built
    b.harness.accept("w1", "Set a timer for two minutes.", 0, 0)
    listen(b.harness, clock, 2)
    wait = AnswerWait(30.0, SEC)
    wait.hear(m.ChunkDecision(index=0, control="listen", delegates=1, turn_end=True))
    wait.hear(m.DelegateRequest("w1", "Set a timer for two minutes.", 0, 0))
    for e in emit:
        if isinstance(e, m.WorkEvent):
            wait.hear(e)
    assert set(wait.open()) == {"w1-later"}  # the answer was said; its ring is still owed

    def cut(n: int) -> str:  # chunk n-1 decided (a quiet listen), then capture asks whether to cut chunk n
        wait.hear(m.ChunkDecision(index=n - 1, control="listen"))
        return wait.after_file(n, virtual=True)

    assert [cut(n) for n in (1, 2, 3)] == [GO, GO, GO]  # at once: no pacing to the real clock
    assert cut(31) == END
    assert wait.unanswered.startswith('the answer to "Set a timer for two minutes." (the timer it set was not yet '
                                      'due) was not spoken within 30 s')


def test_the_ring_gets_a_name_of_its_own_and_is_stored_once(built):
    """A delegate already named like a ring does not take the ring's place; a task run again after a crash
    between storing the ring and its answer stores the ring once."""
    b, clock, emit = built
    h = b.harness
    h.accept("t-later", "What is the capital of France?", 0, 0)
    h.accept("t", "Set a timer for ten seconds.", 0, 1)
    got = listen(h, clock, 14)
    assert sorted(r.text for _, r in got) == ["Paris is the capital of France.", "Timer set for 10 seconds.",
                                              "Your 10-second timer is done."]
    assert h.store.get("t-later2").later == "Your 10-second timer is done."
    h._schedule(h.store.get("t"), Later(10, "Your 10-second timer is done."), clock.now_ns())  # the re-run
    assert [i.id for i in h.store.all() if i.later] == ["t-later2"]
