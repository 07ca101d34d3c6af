"""Questions the local clock answers: "what time is it", "what's the date", "what day is it today".

Read from the words alone: a question about another city's time names the city,
so it is left to whoever knows zones (the answer here is the machine's own
local time and date); `clock_elsewhere` says such a question is one, so it is
delegated by rule too and never waits for a model to decide.
"""
from __future__ import annotations

import re

_TIME = re.compile(r"\b(what(?:'s| is)? the time|what time is it|(?:tell|give) me the time|"
                   r"(?:have|got) the time|what time (?:do you have|have you got))\b")
_DATE = re.compile(r"\b(what(?:'s| is)? (?:the |today's |todays )?date|what date is it|"
                   r"which date is it|the date today)\b")
_DAY = re.compile(r"\b(what(?:'s| is)? (?:the )?day (?:is it|of the week|today)|what day is it|which day is it|"
                  r"what day it is)\b")
# "What is today's date?" as a recognizer mishears it in unusual voices ("today's bait", "the mate to mate"):
# only the whole question in that shape, with a word that rhymes with "date" where "date" belongs.
_LIKE_DATE = r"(?:date|dates|bait|mate|gate|late|eight|ate|dave|dame)"
_MISHEARD_DATE = re.compile(rf"^(?:hey |so |and |okay )?what(?:'s| is) (?:the |today's |todays |to days )"
                            rf"{_LIKE_DATE}(?: (?:today|to \w+|it is|is it|now))?$")
# The model's own instruction for the clock: "Find the current date and time." (the first one named is answered).
_CURRENT = re.compile(r"\b(?:the )?current (?:local )?(time|date|day)\b")
_ELSEWHERE = re.compile(r"\b(in|at) [a-z]")  # "what time is it in Tokyo": another place's clock


def clock_question(text: str) -> str | None:
    """'time', 'date' or 'day' when the words ask the local clock for it; None otherwise."""
    low = re.sub(r"\s+", " ", text.lower().replace("’", "'")).strip()
    tail = low
    if _MISHEARD_DATE.match(low.strip(" ?.!,")):
        return "date"
    for kind, rx in (("time", _TIME), ("date", _DATE), ("day", _DAY)):
        m = rx.search(low)
        if m:
            tail = low[m.end():]
            if _ELSEWHERE.match(tail.strip(" ,")) and not tail.strip(" ,").startswith(("in the ", "at the moment")):
                return None
            return kind
    m = _CURRENT.search(low)
    if m:
        tail = low[m.end():].strip(" ,")
        tail = re.sub(r"^and (the )?(time|date|day)\b", "", tail).strip(" ,")
        if not _ELSEWHERE.match(tail) and not re.search(r"\b(in|at|for) [a-z]", tail):
            return m.group(1)
    return None


# "what time is it in Tokyo", "what's the time in New York right now", "the current time in Sydney"
_ASKS_ELSEWHERE = re.compile(r"\b(?:what time is it|what(?:'s| is) the time|(?:current |local )+time|time is it)\s+"
                             r"(?:right now |now )?in (?!the\b)[a-z]")


def clock_elsewhere(text: str) -> bool:
    """The words ask for the time in another place (which place is the helper's to work out)."""
    low = re.sub(r"\s+", " ", text.lower().replace("’", "'")).strip()
    return bool(_ASKS_ELSEWHERE.search(low))
