"""The embedded default's rules: sums and the clock become a delegate span, "what did I just say" is said back."""
from __future__ import annotations

from edge.frontend.default import grammar as protocol
from edge.frontend.default.rules import by_rule


def test_a_sum_and_a_clock_question_become_a_span_the_harness_answers():
    for said in ("What is twelve times seven?", "How many grams are in two kilograms?", "What's the date today?"):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == ""


def test_what_did_i_just_say_is_answered_from_the_history():
    history = [("user", "I am flying to Seoul tomorrow."), ("assistant", "Have a good flight."),
               ("user", "What did I just say?")]
    assert by_rule("What did I just say?", history) == 'You said: "I am flying to Seoul tomorrow."'
    assert by_rule("Can you repeat what I just said?", history[-1:]) == "You have not said anything else yet."


def test_everything_else_is_left_to_the_model():
    for said in ("Tell me a story about a lighthouse keeper.", "What is the capital of France?",
                 "What time is it in Tokyo?"):
        assert by_rule(said, [("user", said)]) is None
