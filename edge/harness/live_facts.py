"""Requests whose answer changes by the hour (weather, news, prices, scores, traffic): a local chat model has no
way to know them and makes them up, so the general capability says so instead of asking it."""
from __future__ import annotations

import re

# Each topic and how it is named in the sentence said back.
_TOPICS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.I), name) for p, name in (
    (r"\bweather (like|in|at|outside|today|tomorrow|tonight|now|this)\b|\bweather for (today|tomorrow|tonight|the "
     r"week)|\b(the|today'?s|tomorrow'?s) weather\s*[?.!]?$|\bforecast\b|\b(is it|will it) (rain|snow)", "the weather"),
    (r"\b(today'?s|latest|the) (news|headlines)\s*[?.!]?$|\bnews (today|tonight|this morning)\b|\bin the news\b",
     "the news"),
    (r"\b(stock|share|bitcoin|crypto) (price|prices)\b|\bexchange rate\b|\bprice of (gold|oil|bitcoin)\b",
     "prices"),
    (r"\b(score|result)s? of (the|last|tonight|today)|\bwho (won|is winning) (the|last|today|tonight)\b",
     "scores"),
    (r"\btraffic (like |on |in |today|now)|\bflight status\b|"
     r"\b(is|was) (my|the) (flight|train) (delayed|late|on time)\b",
     "traffic and travel"),
))


def live_topic(request: str) -> str | None:
    """The live topic a request asks about, or None."""
    return next((name for pattern, name in _TOPICS if pattern.search(request)), None)


def cannot_know(topic: str) -> str:
    return f"I can't check {topic} from here: this device has no live source for it."
