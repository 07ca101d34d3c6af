"""Requests whose answer changes by the hour (weather, news, prices, scores, traffic).

A local chat model has no way to know them and makes them up ("Madrid is currently experiencing a mild
breeze"): the embedded default delegates them by rule, and the harness's general capability says it cannot
know them unless a skill or a server with a live source takes them.
"""
from __future__ import annotations

import re

# Each topic and how it is named in the sentence said back.
_TOPICS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.I), name) for p, name in (
    (r"\bweather (like|in|at|outside|today|tomorrow|tonight|now|this|going|be|doing)\b|"
     r"\bweather for (today|tomorrow|tonight|the week)|\b(the|today'?s|tomorrow'?s) weather\s*[?.!]?$|\bforecast\b|\b(is it|will it) (going to |gonna )?(rain|snow)", "the weather"),
    (r"\b(today'?s|latest|the) (news|headlines)\s*[?.!]?$|\bnews (today|tonight|this morning)\b|\bin the news\b",
     "the news"),
    (r"\b(stock|share|bitcoin|crypto) (price|prices)\b|\bexchange rate\b|\bprice (of|on|for) (gold|oil|bitcoin|ethereum|petrol|gas)\b|"
     r"\b(bitcoin|ethereum|gold|oil|petrol|gas|shares?|stocks?) (cost|costs|worth|trading|trade)\b|"
     r"\bhow much is (a |an |one )?(bitcoin|ethereum|ounce of gold|barrel of oil)\b",
     "prices"),
    # "Who won the World Cup in 1966?" is history, not a score: a winner is live only when it is recent.
    (r"\b(score|result)s? of (the|last|tonight|today)|\bwho is winning\b|\bwho won\b.*\b(last night|today|"
     r"tonight|yesterday|this (morning|afternoon|evening|week|weekend|season))\b",
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
