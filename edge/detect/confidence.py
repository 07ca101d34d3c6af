"""When a transcript is too unlikely to answer: whisper's own probabilities against measured thresholds.

Two signs that the words were probably misheard, from the recognizer itself:

- the whole transcript is unlikely: its mean log-probability per token, as decoded, is under `min_logprob`
  (then the words are not worth repeating: "Sorry, I didn't catch that.");
- one content word is unlikely: the least probable token of a word that is not a function word is under
  `min_word`, whisper reading the same audio once more with the transcript given (one decoder pass; then the
  words are asked back: "Did you say sixth time made is 1960?").

The thresholds are the default frontend's settings, chosen from `venus-edge bench asr --confidence`
(docs/measurements/answers.md): most misheard transcripts fall under them, few heard right do.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.detect.asr import Heard

# Words whose loss changes little of what was asked: a doubt about them is not worth a question back.
FUNCTION_WORDS = frozenset("""a an the is are was were be been am do does did to of in on at for by with from and
or but if it its it's this that these those i me my you your we our he she they them his her their what what's
whats who how when where which why can could would will should shall please just so some any there here
""".split())


@dataclass(frozen=True)
class Doubt:
    """Why a transcript is not answered: `unlikely` (the whole of it) or `word` (one content word)."""

    why: str
    value: float  # the mean log-probability per token, or the word's probability
    word: str = ""

    def journal(self) -> dict:
        return {"why": self.why, "value": round(self.value, 3), **({"word": self.word} if self.word else {})}


def content(word: str) -> bool:
    w = re.sub(r"[^a-z0-9']", "", word.lower())
    return bool(w) and w not in FUNCTION_WORDS


def doubt(heard: Heard, min_logprob: float, words: list[tuple[str, float]] | None = None,
          min_word: float = 0.0) -> Doubt | None:
    """The doubt about `heard`, or None when it is likely enough to answer. `words`: each word and its
    probability (`Transcriber.word_probabilities`), when the word test is on (`min_word` > 0)."""
    if heard.logprob < min_logprob:
        return Doubt("unlikely", heard.logprob)
    if min_word > 0 and words:
        worst = min(((w, p) for w, p in words if content(w)), key=lambda wp: wp[1], default=None)
        if worst is not None and worst[1] < min_word:
            return Doubt("word", worst[1], worst[0])
    return None
