"""The spoken-question correctness set: sums, unit conversions, the clock, and "what did I just say?".

Questions come from templates filled by a seed and are spoken by espeak-ng
voices other than the bundled example's (its plain en-us), at several rates.
Each question carries how its reply is checked: a number (within 1 %), the
machine's time, day or date while the set runs, or words it must repeat.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

# espeak-ng English voices and variants, none of them the bundled example's plain en-us.
VOICES = ["en-us+f3", "en-gb+m3", "en-gb-x-rp+f4", "en-us+m7", "en-gb-scotland+m1", "en-029+f1", "en-gb+f2",
          "en-us+klatt"]
RATES = [140, 160, 180]

_NUM = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
       "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
COLOURS = ["green", "blue", "yellow", "purple", "orange", "red"]
PETS = ["Biscuit", "Max", "Luna", "Pepper", "Oscar", "Daisy"]
CITIES = ["Lisbon", "Oslo", "Cairo", "Denver", "Dublin", "Seoul"]


def spell(n: int) -> str:
    """0..999 in words, as a person says it ("three hundred and forty two")."""
    if n < 20:
        return _NUM[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _NUM[n % 10])
    rest = n % 100
    return f"{_NUM[n // 100]} hundred" + ("" if rest == 0 else " and " + spell(rest))


@dataclass(frozen=True)
class Question:
    text: str
    kind: str  # arithmetic, conversion, time, day, date, recall, or "say" (a statement that is not scored)
    expect: tuple  # ("number", value) / ("time",) / ("day",) / ("date",) / ("words", word, ...) / ()
    voice: str
    wpm: int


Ranges = dict[str, tuple[tuple[int, int], tuple[int, int]]]
# Per operator, the ranges of the two numbers drawn: (a, b), or for "divided by" (b, the quotient).
SUM_RANGES: Ranges = {"plus": ((2, 60), (2, 40)), "minus": ((20, 99), (2, 19)), "times": ((2, 12), (2, 12)),
                      "divided by": ((2, 9), (2, 12))}


def draw_sum(rng: random.Random, ranges: Ranges) -> tuple[int, str, int, float]:
    """A random sum with whole numbers: (a, operator, b, value); a division always comes out whole."""
    op = rng.choice(["plus", "minus", "times", "divided by"])
    (lo1, hi1), (lo2, hi2) = ranges[op]
    x, y = rng.randint(lo1, hi1), rng.randint(lo2, hi2)
    if op == "divided by":
        return x * y, op, x, float(y)
    return x, op, y, float({"plus": x + y, "minus": x - y, "times": x * y}[op])


def _arithmetic(rng: random.Random) -> tuple[str, float]:
    a, op, b, value = draw_sum(rng, SUM_RANGES)
    form = rng.choice(["What is {a} {op} {b}?", "What's {a} {op} {b}?", "How much is {a} {op} {b}?"])
    return form.format(a=spell(a), op=op, b=spell(b)), float(value)


_CONVERSIONS = [
    ("How many centimeters are in {n} inches?", 2.54), ("What is {n} miles in kilometers?", 1.609344),
    ("Convert {n} kilograms to pounds.", 2.20462262), ("How many minutes are in {n} hours?", 60.0),
    ("How many grams are in {n} kilograms?", 1000.0), ("What is {n} feet in meters?", 0.3048),
]


def _conversion(rng: random.Random) -> tuple[str, float]:
    if rng.random() < 0.2:
        c = rng.choice([10, 20, 25, 30, 40, 100])
        return f"What is {spell(c)} degrees Celsius in Fahrenheit?", c * 9 / 5 + 32
    form, factor = rng.choice(_CONVERSIONS)
    n = rng.randint(2, 12)
    return form.format(n=spell(n)), n * factor


CLOCK = [("What time is it?", "time"), ("What's the time?", "time"), ("What day is it today?", "day"),
         ("What is today's date?", "date"), ("Hey, what time is it now?", "time"), ("What's the date today?", "date")]


def generate(n: int, seed: int) -> list[Question]:
    """About `n` scored questions (recall questions bring a statement before them), in the seed's voices."""
    rng = random.Random(seed)
    pool = [(v, r) for v in VOICES for r in RATES]
    rng.shuffle(pool)
    out: list[Question] = []
    kinds = ["arithmetic"] * 4 + ["conversion"] * 2 + ["clock"] * 2 + ["recall"]
    scored = 0
    while scored < n:
        voice, wpm = pool[len(out) % len(pool)]
        kind = kinds[scored % len(kinds)]
        if kind == "arithmetic":
            text, value = _arithmetic(rng)
            out.append(Question(text, kind, ("number", value), voice, wpm))
        elif kind == "conversion":
            text, value = _conversion(rng)
            out.append(Question(text, kind, ("number", value), voice, wpm))
        elif kind == "clock":
            text, what = rng.choice(CLOCK)
            out.append(Question(text, what, (what,), voice, wpm))
        else:
            word, said = rng.choice([(c, f"My favourite colour is {c}.") for c in COLOURS] +
                                    [(p, f"My dog is called {p}.") for p in PETS] +
                                    [(c, f"I am flying to {c} tomorrow.") for c in CITIES])
            out.append(Question(said, "say", (), voice, wpm))
            out.append(Question(rng.choice(["What did I just say?", "Can you repeat what I just said?"]),
                                "recall", ("words", word.lower()), voice, wpm))
        scored += 1
    return out
