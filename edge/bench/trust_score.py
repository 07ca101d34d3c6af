"""One reply judged as a user would: right, an honest decline, asked back, or wrong."""
from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from zoneinfo import ZoneInfo

from edge.bench.trust_set import Request

VERDICTS = ("right", "declined", "asked back", "wrong")
_ASKED = re.compile(r"\b(didn'?t catch|did you say|say it again|please name)\b", re.I)
_DECLINED = re.compile(r"\b(can'?t|cannot|could not|couldn'?t|no live source|not connected|no home devices|"
                       r"don'?t know)\b", re.I)
_WORKED = re.compile(r"\d+\s*(times|plus|minus|divided by)\s*\d+ is\b", re.I)
_RESULT = re.compile(r"\b(?:is|equals|makes|gives)\s+(-?[\d][\d,.]*|[a-z -]+?)(?:[.!?]|$)", re.I)
_NUMBER_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "fifteen": 15, "twenty": 20}


def _clock_said(text: str) -> set[tuple[int, int]]:
    return {(int(h) % 12, int(m)) for h, m in re.findall(r"\b(\d{1,2})[:. ]?(\d{2})\b", text)
            if int(h) <= 23 and int(m) <= 59}


def _says_time(reply: str, moments: list[datetime], zone: str | None = None) -> bool:
    said = _clock_said(reply)
    return any((t.astimezone(ZoneInfo(zone)) if zone else t).hour % 12 == h and
               (t.astimezone(ZoneInfo(zone)) if zone else t).minute == m for t in moments for h, m in said)


def _numbers(text: str) -> list[float]:
    from edge.language.spoken_math import numbers_in
    return numbers_in(text.replace("-", " "))


_NO_ONE = re.compile(r"\b(no one|nobody|no people|(do not|don'?t|can'?t) see any ?(one|body))\b")
_SOMEONE = {1: re.compile(r"\b(one|1|a) (person|face)\b"), 2: re.compile(r"\b(two|2) (people|persons|faces)\b")}
COLOURS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "white", "black", "grey", "gray", "brown")


def _scene_holds(check: tuple, low: str) -> bool:
    """One part of a camera reply: the sign's words, how many people, the first colour named, no text read."""
    words = re.findall(r"[a-z]+", low)
    if check[0] == "words":
        return all(w in words for w in check[1:])
    if check[0] == "people":
        if check[1] == 0:
            return bool(_NO_ONE.search(low)) and not any(rx.search(low) for rx in _SOMEONE.values())
        return bool(_SOMEONE[check[1]].search(low)) and not _NO_ONE.search(low)
    if check[0] == "colour":
        named = [w.replace("gray", "grey") for w in words if w in COLOURS]
        return bool(named) and named[0] == check[1]
    if check[0] == "no_text":
        return not ({"says", "text", "reads", "sign"} & set(words))
    return False


def _right(r: Request, reply: str, moments: list[datetime]) -> bool:
    low = reply.lower()
    kind = r.expect[0]
    if kind == "scene":
        return all(_scene_holds(check, low) for check in r.expect[1:])
    if kind == "number":
        # The result a sum says ("... is 88."); else its last number. The judge's recognizer may repeat the
        # start of a reply after it ("8 times 11 is 88. 8 times"), which the last number would misread.
        said = _RESULT.search(reply)
        got = _numbers(said.group(1)) if said else _numbers(reply)
        return bool(got) and abs(got[-1] - r.expect[1]) <= max(0.01 * abs(r.expect[1]), 0.011)
    if kind == "clock":
        what = r.expect[1]
        if what == "time":
            return _says_time(reply, moments)
        if what == "day":
            return any(f"{t:%A}".lower() in low for t in moments)
        return any(f"{t:%B}".lower() in low and str(t.day) in re.findall(r"\d+", low) for t in moments)
    if kind == "zone":
        return _says_time(reply, moments, r.expect[1])
    if kind == "timer":
        n = r.expect[1]
        return "minute" in low and (str(n) in re.findall(r"\d+", low) or
                                    any(w in low.split() and v == n for w, v in _NUMBER_WORDS.items()))
    if kind == "words":
        return all(w in re.findall(r"[a-z]+", low) or (w == "zero" and re.search(r"\b0\b", low))
                   for w in r.expect[1:])
    if kind == "home":
        return bool(re.search(r"\b(turned|switched|is (on|off)|are (on|off)|done|ok)\b", low))
    if kind == "any":
        return bool(low.strip()) and not re.search(r"\b(sum|timer|couldn'?t finish|sorry)\b", low) \
            and not _WORKED.search(low)  # a sum worked out for a joke came from another request
    return False


# A timer set by an earlier request ringing inside this reply's time: its words, not the reply's.
_RING = re.compile(r"\s*\byour [\w -]*?timer is (done|up)\b[.!]?", re.I)


def verdict(r: Request, reply: str, moments: list[datetime], home: bool = False) -> str:
    """right / declined / asked back / wrong. A live fact is never right: only declining it is honest; nor is
    home control with no home connected (`home`): there a device said to be switched is a made-up answer."""
    reply = _RING.sub("", reply)
    if r.expect[0] == "home" and not home:
        pass  # never right: declined, asked back or wrong
    elif r.expect[0] != "decline" and _right(r, reply, moments):
        return "right"
    if _ASKED.search(reply):
        return "asked back"
    if _DECLINED.search(reply):
        return "declined"
    return "wrong"


def tally_line(verdicts: list[str], via: str, note: str = "") -> str:
    c, n = Counter(verdicts), max(1, len(verdicts))
    return (f"answers: right {100 * c['right'] / n:.0f}%, declined {100 * c['declined'] / n:.0f}%, "
            f"asked back {100 * c['asked back'] / n:.0f}%, wrong {100 * c['wrong'] / n:.0f}% "
            f"over {len(verdicts)} ({via}){note}")


def by_kind(requests: list[Request], verdicts: list[str], via: str) -> str:
    """Each kind's share right, and how its other replies went: `camera 18/20 right (2 wrong)`; camera
    questions also per scene."""
    groups: dict[str, list[str]] = {}
    for r, v in zip(requests, verdicts):
        groups.setdefault(r.kind, []).append(v)
        if r.scene:
            groups.setdefault(f"{r.kind} {r.scene}", []).append(v)
    cells = []
    for kind in sorted(groups):
        c = Counter(groups[kind])
        rest = ", ".join(f"{c[v]} {v}" for v in VERDICTS[1:] if c[v])
        cells.append(f"{kind} {c['right']}/{len(groups[kind])} right" + (f" ({rest})" if rest else ""))
    return f"by kind ({via}): " + "; ".join(cells)
