"""Replies decided by rule before the decision model is asked, for what a 0.5B model gets wrong.

- A sum, a unit conversion, a question for the clock (here or in another city), or a timer or reminder to set, check or cancel: the
  delegate span alone, holding the words as heard; the harness's calculator, clock or timer answers, and
  that answer is spoken (the protocol's way). Left to the model, a timer is promised and never rings.
- Weather, news, prices, scores or traffic: the same, so the harness answers from a live source when it has
  one and says it has none otherwise; the 0.5B model makes them up ("a bitcoin trades at around $0.125").
- Turning a device in the home on or off, or asking whether it is: the same; the harness's home tools do it,
  or it says plainly that none is connected (the model says "The kitchen light has been turned off." either way).
- A question about the camera picture: delegated the same way; the harness's camera capability answers from
  what the device measures (edge/understand/camera.py), where the model would guess.
- "What did I just say?": the frontend holds the conversation, so it says the user's previous words back.
- A story, an explanation or a description (`at_length`): the model's own, told at length and never
  delegated; with the span allowed, the 0.5B model "looks up" a story and the helper refuses it.
"""
from __future__ import annotations

import re

from edge.language.camera_question import camera_question
from edge.language.clock_question import clock_elsewhere, clock_question
from edge.frontend.default import grammar as protocol
from edge.language.home_words import home_request
from edge.language.live_facts import live_topic
from edge.language.spoken_math import work_out
from edge.language.timer_words import timer_request

_RECALL = re.compile(r"\b(what did i (just )?say|what was i (just )?saying|repeat what i (just )?said|"
                     r"what i just said)\b", re.I)


_AT_LENGTH = re.compile(r"\b(stor(y|ies)|tale|poem|describe|description|explain|explanation|imagine|"
                        r"tell (me|us) about (yourself|your|a|an|the history|how|why|what))\b", re.I)
# ... unless it needs what the model cannot know ("describe today's weather", "explain the news").
_LOOKUP = re.compile(r"\b(news|weather|forecast|today|tonight|tomorrow|yesterday|now|latest|current|currently|"
                     r"price|prices|score|scores|stocks?|traffic|schedule|open|opening|nearby|near me)\b", re.I)


def at_length(said: str) -> bool:
    """A request the model answers itself at length: a story, an explanation, a description."""
    return bool(_AT_LENGTH.search(said)) and not _LOOKUP.search(said)


def by_rule(said: str, history: list[tuple[str, str]]) -> str | None:
    """The reply's whole text (protocol included) when a rule decides it; None to ask the model.

    `said` is the user's words, protocol stripped; `history` ends with them.
    """
    if (timer_request(said) or work_out(said) or clock_question(said) or clock_elsewhere(said) or live_topic(said)
            or camera_question(said) or home_request(said)):
        return f"{protocol.OPEN}{said[:protocol.MAX_INSTRUCTION]}{protocol.CLOSE}"
    if _RECALL.search(said):
        before = [text for role, text in history[:-1] if role == "user"]
        if not before:
            return "You have not said anything else yet."
        last = re.sub(r"^\(The camera shows[^)]*\)\s*", "", before[-1]).strip().rstrip(".!?")
        return f'You said: "{last}."'
    return None
