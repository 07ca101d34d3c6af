"""Structured results said as a person would say them (edge.language.say, through polish)."""
from __future__ import annotations

import json
import re
from datetime import time

import pytest

from edge.harness.polish import polish
from edge.language.say import clock_time, join, say, say_text

UNSPEAKABLE = re.compile(r'[{}\[\]"]|\d{4}-\d{2}-\d{2}')


def spoken(text: str) -> str:
    out = polish(text)
    assert not UNSPEAKABLE.search(out), out
    return out


@pytest.mark.parametrize("hh,mm,said", [
    (22, 39, "10:39 in the evening"), (7, 0, "7 o'clock in the morning"), (0, 0, "midnight"), (12, 0, "noon"),
    (0, 5, "12:05 in the morning"), (13, 30, "1:30 in the afternoon"), (18, 0, "6 o'clock in the evening")])
def test_clock_times_are_said_as_people_say_them(hh, mm, said):
    assert clock_time(time(hh, mm)) == said


def test_the_time_servers_answer_is_one_sentence_with_the_place():
    raw = json.dumps({"timezone": "Asia/Tokyo", "datetime": "2026-12-01T22:39:51+09:00", "day_of_week": "Tuesday",
                      "is_dst": False}, indent=2)
    assert spoken(raw) == "It's 10:39 in the evening on Tuesday in Tokyo."
    conv = {"source": {"timezone": "America/New_York", "datetime": "2026-12-02T09:00:00-05:00"},
            "target": {"timezone": "Europe/London", "datetime": "2026-12-02T14:00:00+00:00"},
            "time_difference": "+5.0h"}
    assert spoken(json.dumps(conv)) == "9 o'clock in the morning in New York is 2 o'clock in the afternoon in London."


def test_objects_lists_and_units_become_sentences():
    assert spoken('{"temperature": "21 °C", "humidity": 40}') == \
        "The temperature is 21 degrees Celsius. The humidity is 40."
    assert spoken('["milk", "eggs", "bread"]') == "Milk, eggs and bread."
    assert spoken('{"result": ["a", "b"]}') == "A and b."
    assert join([str(i) for i in range(9)]) == "0, 1, 2, 3 and 5 more"
    assert spoken("[]") == "There's nothing there."


def test_iso_times_inside_prose_are_said_not_spelled():
    out = spoken("Last updated 2026-12-01T22:39:51Z by the sensor; next check 2026-12-03.")
    assert out == "Last updated 10:39 in the evening on December 1, 2026 by the sensor; next check December 3, 2026."
    assert spoken("2026-12-01T08:15:00+01:00") == "It's 8:15 in the morning."
    assert "to" not in spoken("Due 2026-12-01.")  # not read as a range "2026 to 12"


def test_home_assistant_answers_confirm_the_action_in_words():
    done = {"speech": {}, "response_type": "action_done", "data": {
        "targets": [], "success": [{"name": "Kitchen Light", "type": "entity", "id": "light.kitchen"}],
        "failed": [{"name": "Porch Light", "type": "entity", "id": "light.porch"}]}}
    assert say(done, "turn off the kitchen light", "HassTurnOff") == \
        "Turned off the Kitchen Light. I couldn't reach the Porch Light."
    assert say(done, "", "") == "Done: Kitchen Light. I couldn't reach the Porch Light."
    told = {"speech": {"plain": {"speech": "The garage door is open"}}, "response_type": "query_answer", "data": {}}
    assert say(told) == "The garage door is open."
    assert say({"response_type": "error", "data": {"code": "no_valid_targets"}}) == \
        "That didn't work: no valid targets."


def test_live_context_is_narrowed_to_what_was_asked():
    listing = ("Live Context: An overview of the areas and the devices in this smart home:\n"
               "- names: Kitchen Light\n  domain: light\n  state: off\n  areas: Kitchen\n"
               "- names: Hall Thermostat\n  domain: climate\n  state: 'heat'\n  areas: Hall\n"
               "  attributes:\n    current_temperature: 21\n")
    raw = json.dumps({"success": True, "result": listing})
    assert say_text(raw, "is the kitchen light on?") == "The Kitchen Light is off."
    assert say_text(raw, "what's on in the hall?") == "The Hall Thermostat is heat, current temperature 21."
    assert spoken(raw) == "The Kitchen Light is off. The Hall Thermostat is heat, current temperature 21."


def test_text_that_only_looks_like_json_is_left_as_text():
    assert polish("{not json} but words") == "not json but words."  # braces dropped as markup, words kept
    assert polish("It is 21°C.") == "It is 21 degrees Celsius."
    assert say_text("plain words") == "plain words"
