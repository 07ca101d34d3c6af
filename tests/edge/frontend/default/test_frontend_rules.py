"""The embedded default's rules: sums and the clock become a delegate span, "what did I just say" is said back."""
from __future__ import annotations

from edge.frontend.default import grammar as protocol
from edge.frontend.default.rules import by_rule


def test_a_sum_and_a_clock_question_become_a_span_the_harness_answers():
    for said in ("What is twelve times seven?", "How many grams are in two kilograms?", "What's the date today?"):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == ""


def test_a_timer_or_reminder_becomes_a_span_and_is_never_promised_by_the_model():
    for said in ("Set a timer for two minutes, please.", "Remind me in ten minutes to check the oven.",
                 "How long is left on my timer?", "Cancel the timer.", "Set a timer for banana minutes."):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == "", said
    for said in ("How do I set a timer on my oven?", "My kitchen timer is broken."):
        assert by_rule(said, [("user", said)]) is None, said


def test_weather_prices_and_traffic_are_delegated_instead_of_made_up():
    # The 0.5B model answered these itself: "Madrid is currently experiencing a mild breeze and sunny weather.",
    # "Bitcoin is currently trading at around $0.125 per Bitcoin.", "The traffic on the M25 is generally moderate".
    for said in ("What's the weather going to be like in Madrid tomorrow?", "How much does a bitcoin cost right now?",
                 "What's the traffic like on the M25?", "Will it snow in Denver this weekend?"):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == "", said


def test_a_price_heard_with_on_is_still_a_live_fact():
    # "What is the price of bitcoin?" was heard "What is the price on Bitcoin?" and answered "$1.00".
    for said in ("What is the price on Bitcoin?", "What's the price for gold today?"):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == "", said


def test_home_control_is_delegated_and_never_claimed_by_the_model():
    # With nothing connected the model said "The kitchen light has been turned off." (or only echoed the words).
    for said in ("Turn off the kitchen light.", "Could you switch on the porch lamp?", "Is the garage door locked?",
                 "Dim the bedroom lights, please."):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == "", said


def test_what_did_i_just_say_is_answered_from_the_history():
    history = [("user", "I am flying to Seoul tomorrow."), ("assistant", "Have a good flight."),
               ("user", "What did I just say?")]
    assert by_rule("What did I just say?", history) == 'You said: "I am flying to Seoul tomorrow."'
    assert by_rule("Can you repeat what I just said?", history[-1:]) == "You have not said anything else yet."


def test_everything_else_is_left_to_the_model():
    for said in ("Tell me a story about a lighthouse keeper.", "What is the capital of France?",
                 "In which city is the time zone of Japan?"):
        assert by_rule(said, [("user", said)]) is None, said


def test_another_citys_clock_is_delegated_by_rule_without_waiting_for_the_model():
    # Left to the model, the Tokyo question took a decode of its own before the delegate went out.
    for said in ("What time is it in Tokyo?", "What's the time in New York right now?",
                 "What is the current time in Sydney, Australia?"):
        parsed = protocol.parse(by_rule(said, [("user", said)]), finished=True)
        assert parsed.instruction == said and parsed.speech == "", said


def test_stories_explanations_and_descriptions_are_the_models_own_at_length():
    from edge.frontend.default.rules import at_length

    for said in ("Please tell me a long story about a lighthouse keeper and his cat.",
                 "Describe your ideal weekend in the mountains.", "Can you explain how rainbows form?",
                 "Tell me about yourself.", "Write a short poem about the sea."):
        assert at_length(said) and by_rule(said, [("user", said)]) is None, said
    for said in ("Describe today's weather in Oslo.", "Explain the news this morning.", "What is two plus two?",
                 "Tell me about a good restaurant nearby.",
                 "What's the capital of France?"):
        assert not at_length(said), said


def test_a_reply_told_at_length_has_its_own_grammar_and_never_says_it_is_an_ai():
    from edge.frontend.default.llm import _llama

    llama_cpp = _llama()
    from edge.backends.locate import QWEN_GGUF, assemble

    vocab = llama_cpp.Llama(str(assemble(QWEN_GGUF)), vocab_only=True, verbose=False)

    def tokenize(text: str) -> list[int]:
        return vocab.tokenize(text.encode(), add_bos=False, special=True)

    assert "delegate" not in protocol.TALK_GRAMMAR and f"{{{protocol.MIN_TALK}," in protocol.TALK_GRAMMAR
    banned = protocol.talk_words(tokenize, "Describe your ideal weekend.")
    assert {tokenize(" AI")[0], tokenize(" sorry")[0]} <= set(banned)
    assert tokenize("As")[0] in protocol.talk_opening(tokenize)
    assert protocol.banned_words(tokenize, "What is AI?") == {}  # the user's own word may be said back
