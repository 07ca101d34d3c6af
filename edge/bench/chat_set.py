"""The conversation set: requests a voice assistant should answer itself, at length.

Stories, explanations and descriptions, filled from templates by a seed and
spoken by espeak-ng voices that neither the tests nor `bench answers` use.
Each is scored on what the assistant did with it: answered locally (no
delegate span), in at least `MIN_WORDS` words, with no refusal and no "as an
AI" disclaimer.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

# espeak-ng English voices and variants used by no test and not by the correctness set.
VOICES = ["en-us+m2", "en-gb+m4", "en-gb-x-gbclan+f1", "en-gb-x-rp+m1", "en-029+m2", "en-gb-x-gbcwmd+f5",
          "en-us+f4", "en-gb-scotland+m4"]
RATES = [145, 160, 170]
MIN_WORDS = 60  # more than a reply capped for one or two sentences (80 tokens) reliably holds

_STORIES = ["Please tell me a long story about {who} and {pet}.", "Tell me a bedtime story about {who}.",
            "Can you tell me a story about {pet} who was afraid of the dark?",
            "Tell me a story about {who} who found a secret door."]
_WHO = ["a lighthouse keeper", "a baker", "a little robot", "a sailor", "an old farmer", "a young painter"]
_PETS = ["his cat", "a clever fox", "a tiny dragon", "a brave mouse", "her dog", "an owl"]
_EXPLAIN = ["Can you explain how {thing} works?", "Explain why {fact}.", "Please explain how {thing} works."]
_THINGS = ["a rainbow", "a bicycle", "a refrigerator", "the heart", "a volcano", "a compass"]
_FACTS = ["the sky is blue", "leaves change colour in autumn", "the sea is salty", "we need sleep",
          "bread rises in the oven"]
_DESCRIBE = ["Describe your ideal weekend in {place}.", "Describe what a walk through {place} is like.",
             "Describe your perfect day at {place}.", "Imagine a holiday in {place} and describe it to me."]
_PLACES = ["the mountains", "an old forest", "the seaside", "a busy market", "a quiet village", "Paris"]

# What a refusal or a disclaimer says ("I'm sorry, but I can't assist with that.", "As an AI language model").
REFUSAL = re.compile(r"(sorry, but i can|i can'?t assist|i cannot (assist|help)|i'?m unable|i am unable|"
                     r"as an ai|language model|i don'?t have personal|i do not have personal)", re.I)


@dataclass(frozen=True)
class Request:
    text: str
    kind: str  # story, explanation or description
    voice: str
    wpm: int


def generate(n: int, seed: int) -> list[Request]:
    """`n` requests, the three kinds in turn, each in a voice and rate of the seed's order."""
    rng = random.Random(seed)
    pool = [(v, r) for v in VOICES for r in RATES]
    rng.shuffle(pool)
    out: list[Request] = []
    seen: set[str] = set()
    while len(out) < n:
        kind = ("story", "explanation", "description")[len(out) % 3]
        if kind == "story":
            text = rng.choice(_STORIES).format(who=rng.choice(_WHO), pet=rng.choice(_PETS))
        elif kind == "explanation":
            form = rng.choice(_EXPLAIN)
            text = form.format(thing=rng.choice(_THINGS), fact=rng.choice(_FACTS))
        else:
            text = rng.choice(_DESCRIBE).format(place=rng.choice(_PLACES))
        if text in seen:
            continue
        seen.add(text)
        voice, wpm = pool[len(out) % len(pool)]
        out.append(Request(text, kind, voice, wpm))
    return out


@dataclass
class Scored:
    local: bool
    words: int
    refused: bool

    @property
    def good(self) -> bool:
        return self.local and self.words >= MIN_WORDS and not self.refused


def score(said: str, delegated: bool) -> Scored:
    """A reply as the assistant said it: local (no span), its length in words, and whether it refused."""
    return Scored(not delegated, len(re.findall(r"[A-Za-z0-9']+", said)), bool(REFUSAL.search(said)))
