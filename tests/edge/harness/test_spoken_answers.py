"""A local model's answer is said aloud: one paragraph of plain sentences, no list, no emoji, no "Certainly!"."""
from __future__ import annotations

import re
import threading

from edge.harness.capability import RunContext
from edge.harness.chat import EmbeddedChat
from edge.harness.general import GeneralCapability
from edge.harness.polish import polish
from edge.language.sentences import split_sentences


def test_an_opening_and_pictographs_take_no_sentence_of_the_three():
    said = polish("Certainly! Here's a simple recipe for pancakes! 🍪 Pancakes are a classic breakfast treat. "
                  "Whisk two eggs into a cup of flour. Fry them in butter. 👍🏽")
    assert said == ("Here's a simple recipe for pancakes! Pancakes are a classic breakfast treat. Whisk two eggs "
                    "into a cup of flour.")
    assert polish("Sure.") == "Sure."  # an opening alone is the answer


def test_a_recipe_asked_of_the_local_model_is_said_as_sentences_not_as_list_headings():
    # Before: "Certainly! Here's a simple recipe for pancakes at your local bakery or restaurant:. Ingredients:."
    request = "Find a good recipe for pancakes."
    cap = GeneralCapability(EmbeddedChat(), timeout_s=120.0)
    raw = cap.run({"request": request}, RunContext("w1", request, 1, threading.Event(), lambda s: True)).text
    assert "\n" not in raw and not re.search(r"(^|\s)[-*•]\s", raw), raw
    sentences = split_sentences(polish(raw))
    assert sentences and all(len(s.split()) >= 4 and not s.rstrip(".").endswith(":") for s in sentences), sentences
