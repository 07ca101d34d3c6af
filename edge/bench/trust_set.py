"""The trust set: spoken requests a user would make, from templates filled by a held-out seed.

Kinds: arithmetic, the clock, the time elsewhere, timers, facts a 0.5B model should know, live facts it cannot
know, home control, and chit-chat, each in a voice and a rate drawn from the seed. Each request carries what a
right reply holds (edge/bench/trust_score.py judges it). The default seed is not the one the routing rules were
written against.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from edge.bench.answers_set import SUM_RANGES, draw_sum, spell

DEFAULT_SEED = 3107
VOICES = ["en-us+f3", "en-gb+m3", "en-gb-x-rp+f4", "en-us+m7", "en-gb-scotland+m1", "en-029+f1", "en-gb+f2",
          "en-us+klatt", "en-us+m3", "en-gb-x-rp+m2", "en-us+f5", "en-gb+m6"]
RATES = [130, 150, 170, 190]


@dataclass(frozen=True)
class Request:
    text: str
    kind: str
    expect: tuple  # ("number", v) / ("clock", "time"|"day"|"date") / ("zone", IANA) / ("words", w, ...) /
    # ("decline",) / ("any",) / ("scene", check, ...) for a camera question (edge/bench/trust_scenes.py)
    voice: str
    wpm: int
    scene: str = ""  # a camera question's kind of scene: sign, face, colour, empty


FACTS = [("What is the capital of France?", "paris"), ("What is the capital of Japan?", "tokyo"),
         ("What is the capital of Italy?", "rome"), ("What's the capital of Germany?", "berlin"),
         ("How many legs does a spider have?", "eight"), ("How many days are there in a week?", "seven"),
         ("What is the largest planet in our solar system?", "jupiter"),
         ("Who wrote Romeo and Juliet?", "shakespeare"), ("What colour is a ripe banana?", "yellow"),
         ("What is the freezing point of water in Celsius?", "zero")]
LIVE = ["What's the weather like?", "What's the weather like in Paris today?", "What's the latest news?",
        "What is the price of bitcoin?", "Who won the game last night?", "Is it going to rain tomorrow?"]
CHAT = ["Tell me a joke.", "How are you today?", "Thank you very much!", "Good morning!",
        "Can you tell me something interesting?"]
CITIES = [("Tokyo", "Asia/Tokyo"), ("London", "Europe/London"), ("New York", "America/New_York"),
          ("Paris", "Europe/Paris"), ("Sydney", "Australia/Sydney")]
CLOCK = [("What time is it?", "time"), ("What day is it today?", "day"), ("What's the date today?", "date")]
HOME = ["Turn off the kitchen light.", "Turn on the living room lamp.", "Is the kitchen light on?",
        "Switch off the lights in the hall."]
KINDS = ["arithmetic", "arithmetic", "clock", "elsewhere", "timer", "fact", "fact", "live", "home", "chat"]


def _one(kind: str, rng: random.Random) -> tuple[str, tuple]:
    if kind == "arithmetic":
        a, op, b, value = draw_sum(rng, SUM_RANGES)
        form = rng.choice(["What is {a} {op} {b}?", "What's {a} {op} {b}?", "Can you work out {a} {op} {b}?"])
        return form.format(a=spell(a), op=op, b=spell(b)), ("number", value)
    if kind == "clock":
        text, what = rng.choice(CLOCK)
        return text, ("clock", what)
    if kind == "elsewhere":
        city, zone = rng.choice(CITIES)
        return rng.choice(["What time is it in {c}?", "What's the time in {c} right now?"]).format(c=city), \
            ("zone", zone)
    if kind == "timer":
        n = rng.choice([2, 3, 5, 10, 15, 20])
        return f"Set a timer for {spell(n)} minutes.", ("timer", n)
    if kind == "fact":
        text, word = rng.choice(FACTS)
        return text, ("words", word)
    if kind == "live":
        return rng.choice(LIVE), ("decline",)
    if kind == "home":
        return rng.choice(HOME), ("home",)
    return rng.choice(CHAT), ("any",)


def generate(n: int, seed: int = DEFAULT_SEED) -> list[Request]:
    rng = random.Random(seed)
    pool = [(v, r) for v in VOICES for r in RATES]
    rng.shuffle(pool)
    out = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        text, expect = _one(kind, rng)
        voice, wpm = pool[i % len(pool)]
        out.append(Request(text, kind, expect, voice, wpm))
    return out
