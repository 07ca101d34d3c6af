"""With a local model, the general capability says it cannot know live facts instead of making them up."""
from __future__ import annotations

import threading

import pytest

from edge.harness.capability import RunContext
from edge.harness.chat import EmbeddedChat
from edge.harness.general import GeneralCapability
from edge.language.live_facts import live_topic


def _ctx(instruction: str) -> RunContext:
    return RunContext("w1", instruction, 1, threading.Event(), lambda s: True)


@pytest.mark.parametrize("request_, topic", [
    ("Find today's weather forecast for Paris, France.", "the weather"),
    ("What's the weather like in Osaka?", "the weather"),
    ("Will it rain in Glasgow tomorrow?", "the weather"),
    ("What are today's headlines?", "the news"),
    ("What is the exchange rate of the euro to the yen?", "prices"),
    ("Who won the match last night?", "scores"),
    ("How is the traffic on the ring road now?", "traffic and travel"),
    ("What's the weather going to be like in Madrid tomorrow?", "the weather"),
    ("How much does a bitcoin cost right now?", "prices"),
    ("What is gold trading at today?", "prices"),
    ("Is it going to rain in Oslo this afternoon?", "the weather"),
    ("Who won the rugby today?", "scores"),
])
def test_live_requests_are_answered_honestly_without_asking_a_model(request_, topic):
    local = EmbeddedChat()  # loaded only when asked: these requests never load it
    out = GeneralCapability(local, timeout_s=2.0).run({"request": request_}, _ctx(request_))
    assert local._llm is None
    assert out.text == f"I can't check {topic} from here: this device has no live source for it."


# A server behind the OpenAI API may search (tests/edge/harness/test_harness_capabilities.py asks one the weather).
@pytest.mark.parametrize("request_", [
    "Describe your ideal weather for a picnic.", "What is the boiling temperature of water?",
    "Tell me a story about a news reporter and her dog.", "Who wrote Pride and Prejudice?",
    "Explain how a stock market works.", "What does good weather look like for sailing?",
    "How much does a bicycle cost to build?", "Who won the World Cup in 1966?",
])
def test_other_requests_are_not_taken_for_live_ones(request_):
    assert live_topic(request_) is None


@pytest.mark.parametrize("request_, city, zone", [
    ("Find the current local time in Sydney, Australia.", "Sydney", "Australia/Sydney"),
    ("What time is it in Lisbon right now?", "Lisbon", "Europe/Lisbon"),
    ("Tell me the time in New York please.", "New York", "America/New_York"),
])
def test_the_time_elsewhere_is_read_from_the_clock_and_the_zone_data(request_, city, zone):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from edge.language.say import clock_time

    local = EmbeddedChat()
    before = datetime.now(ZoneInfo(zone))
    out = GeneralCapability(local, timeout_s=2.0).run({"request": request_}, _ctx(request_))
    after = datetime.now(ZoneInfo(zone))
    assert local._llm is None
    assert out.text in {f"It's {clock_time(t.time())} on {t:%A} in {city}." for t in (before, after)}, out.text


def test_a_place_no_zone_names_gets_no_made_up_time():
    # "Sydney" heard as "should be": the model answered "The current local time in should be right now is 12:00 PM."
    request_ = "Find the current local time in should be right now."
    local = EmbeddedChat()
    out = GeneralCapability(local, timeout_s=2.0).run({"request": request_}, _ctx(request_))
    assert local._llm is None
    assert out.text == 'I don\'t know the time zone of "should be", so I can\'t tell the time there. Please name ' \
                       'the city.'
