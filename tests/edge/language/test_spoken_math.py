"""Spoken sums and conversions are worked out from the words, and anything else is left alone."""
from __future__ import annotations

import pytest

from edge.language.clock_question import clock_question
from edge.language.spoken_math import arithmetic, numbers_in, work_out


@pytest.mark.parametrize("said, value", [
    ("What is twelve times seven?", 84),
    ("Hey, Nair, what is 12 times seven?", 84),
    ("What's three hundred and forty two minus fifty?", 292),
    ("How much is seventy two divided by eight?", 9),
    ("what is 3 plus 4 plus 5 times 2", 17),
    ("What is the square root of eighty one?", 9),
    ("What is 20% of 50?", 10),
    ("What is two to the power of ten?", 1024),
    ("What is three point five plus one?", 4.5),
    ("How many centimeters are in five inches?", 12.7),
    ("What is five miles in kilometers?", 8.04672),
    ("Convert twenty degrees Celsius to Fahrenheit.", 68),
    ("How many minutes are in three hours?", 180),
    ("Convert 1,500 grams to ounces.", 52.9109),
    ("How much is 100 and 8 divided by 9?", 12),  # a recognizer's digits for "one hundred and eight"
    ("Hey, what is 100 and 50 divided by 10?", 15),
    ("Can you work out nine times six?", 54),
    ("Call your tell me what 10 times 3 is.", 30),  # "Could you tell me ..." misheard before a whole sum
])
def test_sums_and_conversions_are_right(said, value):
    worked = work_out(said)
    assert worked is not None and worked.value == pytest.approx(value, rel=1e-4)
    assert numbers_in(worked.text)[-1] == pytest.approx(value, rel=1e-2)  # the spoken answer ends in it


@pytest.mark.parametrize("said", [
    "What is the capital of France?", "How many legs does a spider have?", "what is B plus 4?",
    "Turn the volume down to 4.", "How many days until March 4th?", "What is 7 divided by 0?",
    "Tell me about the year 1999.", "__import__('os').system('ls') plus 1", "What is 5 miles in kilograms?",
])
def test_what_is_not_a_sum_is_left_to_the_model(said):
    assert work_out(said) is None


def test_clock_questions_are_told_apart_and_other_cities_left_alone():
    assert clock_question("Hey, what time is it now?") == "time"
    assert clock_question("What day is it today?") == "day"
    assert clock_question("What's the date today?") == "date"
    assert clock_question("What time is it in Tokyo?") is None
    assert clock_question("What is the capital of France?") is None


@pytest.mark.parametrize("heard, value", [
    ("up in 2 time 3", 6),  # "How much is two times three?" in espeak-ng's en-us+f3 voice, as whisper base heard it
    ("worth 7 times 3", 21),  # "What's seven times three?" in en-us+klatt
    ("What is 30 degrees Celsius in foreign height?", 86),  # "Fahrenheit" in en-gb-scotland+m1
    ("What is forty degrees Celsius in fair and height?", 104),
])
def test_misheard_but_whole_sums_are_still_worked_out(heard, value):
    worked = work_out(heard)
    assert worked is not None and worked.value == pytest.approx(value, rel=1e-4)


@pytest.mark.parametrize("said", [
    "How much is 7 times time?", "What time is it 3", "my 2 cents", "I have 2 dogs and 3 cats",
    "buy 3 apples times 2 please", "the kids ate 2 times 3 cookies yesterday",
])
def test_a_misheard_form_is_recovered_only_when_the_sum_is_whole(said):
    assert work_out(said) is None


def test_a_misheard_date_question_is_still_the_clocks_but_a_lookup_is_not():
    for heard in ("What is today's bait?", "What's the mate to mate?", "what's the late today"):
        assert clock_question(heard) == "date", heard
    for said in ("What is today's weather?", "What's the rate today?", "What is the gate number?",
                 "What is the name made?"):
        assert clock_question(said) is None, said


def test_the_models_own_instruction_for_the_clock_is_the_clocks_unless_it_names_a_place():
    from edge.harness.builtin import ClockCapability

    clock = ClockCapability()
    # "What's the date today?" misheard, delegated by the 0.5B model as this: it went to the general capability.
    assert clock.claim("Find the current date and time.") == {"question": "Find the current date and time."}
    assert clock_question("Tell me the current time.") == "time"
    for elsewhere in ("Find the current local time in Sydney, Australia.", "What is the current date in Tokyo?",
                      "Find the current time and date for London.", "Find the current weather in Berlin."):
        assert clock.claim(elsewhere) is None, elsewhere


def test_a_sum_asked_for_me_is_worked_out():
    worked = arithmetic("Could you work out 18 times 4 for me?")
    assert worked is not None and worked.value == 72
