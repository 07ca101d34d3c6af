"""The trust bench's judge and set: what a user would call right, declined, asked back or wrong."""
from __future__ import annotations

from datetime import datetime

from edge.bench.trust_score import tally_line, verdict
from edge.bench.trust_set import DEFAULT_SEED, KINDS, Request, generate

NOW = [datetime(2026, 12, 6, 19, 27).astimezone()]


def _r(kind: str, expect: tuple) -> Request:
    return Request("", kind, expect, "en-us", 150)


def test_an_answer_from_an_earlier_request_is_wrong_even_for_chit_chat():
    assert verdict(_r("chat", ("any",)), "12 times 8 is 96.", NOW) == "wrong"
    assert verdict(_r("chat", ("any",)), "Why did the chicken cross the road? To get to the other side.", NOW) \
        == "right"


def test_a_sum_fallback_for_a_fact_is_not_right_and_a_made_up_capital_is_wrong():
    fact = _r("fact", ("words", "paris"))
    assert verdict(fact, "The capital of France is Paris.", NOW) == "right"
    assert verdict(fact, "The capital of the city is Tokyo.", NOW) == "wrong"
    assert verdict(fact, "Sorry, I didn't catch that.", NOW) == "asked back"


def test_a_live_fact_is_at_best_declined():
    live = _r("live", ("decline",))
    assert verdict(live, "I can't check the weather from here: this device has no live source for it.", NOW) \
        == "declined"
    assert verdict(live, "It is sunny and 21 degrees.", NOW) == "wrong"


def test_sums_and_the_clock_are_checked_by_value():
    assert verdict(_r("arithmetic", ("number", 48.0)), "6 times 8 is 48.", NOW) == "right"
    assert verdict(_r("arithmetic", ("number", 48.0)), "Sixth time made is 1960.", NOW) == "wrong"
    assert verdict(_r("clock", ("clock", "time")), "It's 7:27 in the evening.", NOW) == "right"


def test_the_set_is_at_least_sixty_requests_over_every_kind_in_many_voices():
    reqs = generate(60, DEFAULT_SEED)
    assert len(reqs) == 60 and {r.kind for r in reqs} == set(KINDS) and len({r.voice for r in reqs}) >= 8
    assert tally_line(["right", "wrong"], "voice") == \
        "answers: right 50%, declined 0%, asked back 0%, wrong 50% over 2 (voice)"


def test_a_device_said_to_be_switched_with_no_home_connected_is_wrong():
    home = _r("home", ("home",))
    assert verdict(home, "The kitchen light has been turned off.", NOW) == "wrong"
    assert verdict(home, "No home devices are connected to me, so I can't do that.", NOW) == "declined"
    assert verdict(home, "The kitchen light has been turned off.", NOW, home=True) == "right"


def test_an_earlier_timer_ringing_inside_a_reply_is_not_part_of_it():
    chat = _r("chat", ("any",))
    assert verdict(chat, "You're welcome. Your five-minute timer is done.", NOW) == "right"
    assert verdict(_r("arithmetic", ("number", 48.0)), "6 times 8 is 48. Your 2 minute timer is done.", NOW) == "right"


def test_a_sums_result_is_read_where_it_is_said_not_from_a_repeat_after_it():
    sum_ = _r("arithmetic", ("number", 88.0))
    assert verdict(sum_, "8 times 11 is 88. 8 times", NOW) == "right"
    assert verdict(_r("arithmetic", ("number", 12.0)), "21-1 is 20. 21- 1 is 20", NOW) == "wrong"
    assert verdict(_r("arithmetic", ("number", 7.0)), "28 divided by 4 or 7", NOW) == "right"
