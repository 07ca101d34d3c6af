"""`bench answers`: its seeded question set, and how a transcribed reply is judged."""
from __future__ import annotations

from datetime import datetime

from edge.bench.answers import correct
from edge.bench.answers_set import Question, generate
from edge.bench.arithmetic_set import generate as sums
from edge.bench.espeak_voices import english_voices, variants
from edge.language.spoken_math import work_out


def test_the_set_is_seeded_covers_every_kind_and_avoids_the_example_voice():
    a, b = generate(27, 11), generate(27, 11)
    assert a == b and a != generate(27, 12)
    assert {q.kind for q in a} >= {"arithmetic", "conversion", "recall", "say"}
    assert {q.kind for q in a} & {"time", "day", "date"}
    assert len([q for q in a if q.kind != "say"]) == 27
    assert all(q.voice != "en-us" for q in a)  # the bundled example's voice
    for q in a:  # every sum and conversion is one the calculator reads the same way
        if q.expect and q.expect[0] == "number":
            assert work_out(q.text).value == q.expect[1], q.text
        if q.kind == "recall":
            assert q.expect[1] in a[a.index(q) - 1].text.lower()


def test_a_reply_is_judged_by_its_last_number_the_clock_and_the_words():
    now = [datetime(2026, 12, 1, 18, 43), datetime(2026, 12, 1, 18, 44)]
    seven = Question("What is three plus four?", "arithmetic", ("number", 7.0), "en-us+f3", 150)
    assert correct(seven, "3 plus 4 is 7.", now)
    assert not correct(seven, "3 plus 4 is 8.", now)
    assert not correct(seven, "I'm sorry, but I can't assist with that.", now)
    clock = Question("What time is it?", "time", ("time",), "en-gb+m3", 160)
    assert correct(clock, "It's 6.44 in the evening.", now)
    assert not correct(clock, "It's 10.30 a.m.", now)
    date = Question("What is today's date?", "date", ("date",), "en-gb+m3", 160)
    assert correct(date, "Today is Tuesday, December 1, 2026.", now)
    assert not correct(date, "Today's date is 10-25-2023.", now)
    recall = Question("What did I just say?", "recall", ("words", "lisbon"), "en-gb+f2", 140)
    assert correct(recall, "You said, I am flying to Lisbon tomorrow.", now)
    assert not correct(recall, "Sure, I can repeat what you just said.", now)


def test_the_arithmetic_set_spreads_over_the_machines_voices_and_piper():
    langs, kinds = english_voices(), variants()
    assert len(langs) >= 5 and {"klatt", "f3", "m7"} <= set(kinds)
    a = sums(48, 23, langs, kinds)
    assert a == sums(48, 23, langs, kinds) and a != sums(48, 24, langs, kinds)
    espeak = [q for q in a if q.voice != "piper"]
    assert len({q.voice for q in espeak}) >= 30 and len({q.wpm for q in espeak}) == 3
    assert 4 <= len([q for q in a if q.voice == "piper"]) <= 8
    for q in a:  # the calculator reads every question as the sum it is
        assert work_out(q.text).value == q.expect[1], q.text
