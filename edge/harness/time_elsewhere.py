"""The time in another place, from this device's clock and its time-zone data: a chat model alone makes it up
("The current local time in Sydney is 12:00 PM."), so the general capability answers it here instead."""
from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from edge.language.say import clock_time

# "what time is it in Sydney", "the current local time in Sydney, Australia", "what's the time in New York now"
_ASKED = re.compile(r"\b(?:what time is it|what(?:'s| is) the time|(?:current |local )+time|time is it|"
                    r"(?:find|tell me|get|check|give me) (?:out )?the time)\s+"
                    r"(?:right now |now )?in ([a-z][a-z .,'-]*)", re.I)
_TAIL = re.compile(r"\b(right now|now|today|at the moment|currently|please)\b.*$|[?.!,]+$", re.I)


@lru_cache(maxsize=1)
def city_zones() -> dict[str, str]:
    """'tokyo' -> 'Asia/Tokyo', 'new york' -> 'America/New_York' (IANA zone names' last part)."""
    out: dict[str, str] = {}
    for zone in sorted(available_timezones()):
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/", "US/")):
            out.setdefault(zone.rsplit("/", 1)[1].replace("_", " ").lower(), zone)
    return out


def zone_named(text: str) -> str | None:
    """The one IANA zone whose city the words name, or None (none, or several)."""
    low = " " + re.sub(r"[^a-z ]+", " ", text.lower()) + " "
    found = {z for city, z in city_zones().items() if f" {city} " in low}
    return found.pop() if len(found) == 1 else None


def place_asked(request: str) -> str | None:
    """The place whose current time the request asks for ("Sydney, Australia"), or None."""
    m = _ASKED.search(request)
    if m is None:
        return None
    place = _TAIL.sub("", m.group(1)).strip(" ,.")
    return place or None


def time_elsewhere(request: str, now: datetime | None = None) -> str | None:
    """The answer to a request for another place's time, or None when it asks no such thing."""
    place = place_asked(request)
    if place is None:
        return None
    zone = zone_named(place)
    if zone is None:  # a place no zone names (often a misheard one): say so, never guess a time
        return f"I don't know the time zone of \"{place}\", so I can't tell the time there. Please name the city."
    t = (now or datetime.now(ZoneInfo("UTC"))).astimezone(ZoneInfo(zone))
    city = zone.rsplit("/", 1)[1].replace("_", " ")
    return f"It's {clock_time(t.time())} on {t:%A} in {city}."
