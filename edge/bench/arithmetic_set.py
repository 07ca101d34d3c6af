"""The spoken-arithmetic set: sums asked in every English espeak-ng voice and variant on the machine, and Piper.

Sums and the ways of asking them come from templates filled by a seed (the
default seed, 23, was never used while the number reading was built: it is
held out). Each question gets a voice from a shuffled pool of every English
espeak-ng voice with every variant the machine has, at 130, 165 or 200 wpm,
with the Piper voice (the one users hear back) as one question in eight.
"""
from __future__ import annotations

import random

from edge.bench.answers_set import Question, Ranges, draw_sum, spell

RATES = [130, 165, 200]
FORMS = ["What is {a} {op} {b}?", "What's {a} {op} {b}?", "How much is {a} {op} {b}?",
         "Could you tell me what {a} {op} {b} is?", "Hey, what is {a} {op} {b}?", "{a} {op} {b}?",
         "Can you work out {a} {op} {b}?"]
DEFAULT_SEED = 23


# Wider than bench answers' own sums: teens and tens are what the recognizer mishears most.
SUM_RANGES: Ranges = {"plus": ((1, 99), (1, 30)), "minus": ((10, 120), (1, 19)), "times": ((2, 15), (2, 12)),
                      "divided by": ((2, 12), (2, 15))}


def _sum(rng: random.Random) -> tuple[str, str, str, float]:
    a, op, b, value = draw_sum(rng, SUM_RANGES)
    return spell(a), op, spell(b), value


def generate(n: int, seed: int, espeak_langs: list[str], espeak_variants: list[str]) -> list[Question]:
    """`n` spoken sums, each in its own voice (lang+variant at a rate, or "piper" at rate 0)."""
    rng = random.Random(seed)
    pool = [(f"{lang}+{var}" if var else lang, wpm) for lang in espeak_langs for var in [""] + espeak_variants
            for wpm in RATES]
    rng.shuffle(pool)
    out = []
    for i in range(n):
        a, op, b, value = _sum(rng)
        text = rng.choice(FORMS).format(a=a, op=op, b=b)
        text = text[0].upper() + text[1:]
        voice, wpm = ("piper", 0) if i % 8 == 7 else pool[i % len(pool)]
        out.append(Question(text, "arithmetic", ("number", value), voice, wpm))
    return out
