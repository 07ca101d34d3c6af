"""Questions about what the camera sees, and which part of the scene each asks for."""
from __future__ import annotations

import re

_KINDS = (
    ("read", r"\bwhat (does|do) (it|the [a-z ]+|that|this) say\b|\bread (it|the [a-z ]+|that|this)\b|"
             r"\bwhat(?:'s| is) written\b|\bwhat does the (sign|text|label|screen) say\b"),
    ("people", r"\b(is|are) (any ?one|any ?body|some ?one|some ?body|there (any ?one|any ?body|some ?one|"
               r"people|a person))\b|\bhow many (people|faces|persons)\b|\bwho is (there|behind me|here)\b|"
               r"\banyone (behind|there|here)\b"),
    # The colour of something here ("the wall", "this", "my shirt"); "a ripe banana" or "the sky" is a fact.
    ("colour", r"\b(what|which) colou?rs? do you see\b|\bwhat colou?rs? am i wearing\b|"
               r"\b(what|which) colou?rs? (is|are) (this|that|these|those|it|they|my|your|his|her|our|"
               r"the (?!sky\b|sun\b|sea\b|ocean\b|grass\b|moon\b|snow\b|blood\b)[a-z]+)\b"),
    ("light", r"\bis it (dark|bright|light)\b|\bhow (dark|bright) is it\b|\bare the lights? on in here\b"),
    ("change", r"\bwhat(?:'s| has)? changed\b|\banything (changed|different|new)\b"),
    ("see", r"\bwhat (can|do) you see\b|\bwhat(?:'s| is) (on|in front of) (the |my )?camera\b|"
            r"\bwhat(?:'s| is) in front of (me|you)\b|\bdescribe (what you see|the (scene|room|camera))\b|"
            r"\bwhat (are you|am i) looking at\b|\bcan you see\b"),
)
_COMPILED = tuple((k, re.compile(p, re.I)) for k, p in _KINDS)


def camera_question(text: str) -> str | None:
    """read / people / colour / light / change / see, or None when the words ask nothing of the camera."""
    return next((k for k, rx in _COMPILED if rx.search(text)), None)
