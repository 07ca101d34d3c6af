"""A sum heard with a broken operand is read again with whisper's own ear for numbers, and nothing else is.

The voices and sums here are the ones a user reported ("Could you tell me what nine times six is?" in
espeak-ng's en-gb-x-rp was heard "what time time 6" and answered with the time of day) and ones like them;
the recognizer is the runtime's own (whisper base, beam 5).
"""
from __future__ import annotations

import pytest

from edge.bench import spoken
from edge.detect import number_reading
from edge.language.spoken_math import arithmetic


@pytest.fixture(scope="module")
def base():
    from edge.detect.asr import Transcriber
    return Transcriber(threads=1, model="base", beam_size=5)


@pytest.mark.parametrize("said", [
    "Could you tell me what time time 6 is?", "What is free plus 4?", "How much in minimum minus 2?",
    "What is B plus 4?", "What's 187 divided by lemon?",
])
def test_a_sum_frame_that_does_not_work_out_is_broken(said):
    assert number_reading.broken_sum(said)


@pytest.mark.parametrize("said", [
    "What time is it in Tokyo?", "Turn off the bathroom television.", "What is 3 plus 4?", "What is nine times",
    "Set a timer for ten minutes.", "Wake me up at seven thirty.", "Mm-hm.",
])
def test_words_that_are_no_broken_sum_are_never_read_again(said):
    assert not number_reading.broken_sum(said)


def test_the_base_tokenizer_has_its_first_merge_back(base):
    # without it " three" is " " + "three", which whisper never writes: prompts and scores read as noise
    assert len(base.tokenizer.encode(" three")) == 1 and len(base.tokenizer.encode(" tell me")) == 2


@pytest.mark.parametrize("voice, wpm, question, value", [
    ("en-gb-x-rp", 160, "Could you tell me what nine times six is?", 54),
    ("en-gb-x-gbclan+m3", 160, "Hey, what is nine minus two?", 7),  # heard "i minus 2"
    ("en-029+croak", 160, "How much is one times ten?", 10),  # heard "one time thin"
    ("en-gb-x-gbclan+f4", 190, "Could you tell me what four minus two is?", 2),
    ("en-gb-x-gbclan+f4", 190, "Could you work out eighteen times four for me?", 72),  # "it in times 4"
    ("en-us", 165, "What is six times eight?", 48),  # "What is 6th time made?": the s of "times" heard as "th"
])
def test_a_misheard_sum_is_read_right_the_second_time(base, voice, wpm, question, value):
    first = base.transcribe(spoken.say(question, voice, wpm))
    again = number_reading.reread(base, first)
    heard = again.text if again is not None else first
    worked = arithmetic(heard)
    assert worked is not None and worked.value == value, (first, again and again.journal())
    if again is not None and again.changed:  # the journal says what was heard first, what was taken, and why
        entry = again.journal()
        assert entry["first"] == first and entry["taken"] == heard and "sum" in entry["why"]
        assert heard in entry["scores"] and first in entry["scores"]


@pytest.mark.parametrize("voice, text", [
    ("en-gb-x-rp", "Turn off the bathroom television."), ("en-gb-scotland+f4", "Tell Anna dinner is ready."),
    ("en-us+klatt2", "What time is it in Tokyo?"),
])
def test_other_words_are_left_as_heard(base, voice, text):
    first = base.transcribe(spoken.say(text, voice, 160))
    assert number_reading.reread(base, first) is None, first


def test_an_operator_word_outside_a_sum_changes_nothing(base):
    # "times" beside a number is a sum's frame, so this is read again, but no reading of it is a whole sum
    first = base.transcribe(spoken.say("Take two pills three times a day, after meals.", "en-gb+m3", 160))
    again = number_reading.reread(base, first)
    assert again is None or not again.changed, again.journal()


@pytest.mark.parametrize("heard, meant", [
    ("Could you work out it in times 4 for me?", "Could you work out 18 times 4 for me?"),
    ("How much is twelve divided by for tea?", "How much is twelve divided by 40?"),
])
def test_a_number_heard_as_two_words_beside_an_operator_is_tried_as_one(heard, meant):
    assert meant in number_reading.substitutions(heard)
