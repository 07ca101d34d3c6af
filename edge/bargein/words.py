"""Deciding what user speech over the assistant's reply means: yield, go on, or wait a chunk.

A backchannel ("mm-hm", "yeah", "right") lets the reply go on; words that
are the assistant's own reply heard back through the microphone (echo) are
ignored; anything else is an interruption. Speech too short to read yet is
decided at the next chunk boundary.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

BACKCHANNELS = frozenset({
    "mm", "mmhm", "mhm", "hm", "hmm", "uhhuh", "uh", "huh", "um", "yeah", "yep", "yes", "yup", "right", "okay",
    "ok", "sure", "alright", "i", "see", "got", "it", "cool", "nice", "wow", "oh", "ah", "aha", "really", "true",
    "exactly", "great", "good", "fine", "go", "on", "indeed",
})
STOP_WORDS = frozenset({"stop", "wait", "hold", "pause", "quiet", "enough", "shush", "hush", "cancel", "no", "sorry",
                        "excuse", "me", "on", "a", "second", "moment", "minute", "please", "hang", "shut", "up",
                        "be", "okay", "ok"})
# Decisions that let the reply go on ("other": speech addressed to someone else, "background": a
# voice in the room well under the user's level; both come from the duplex policy).
GO_ON = frozenset({"backchannel", "echo", "noise", "other", "background"})
MAX_BACKCHANNEL_MS = 1200  # longer speech is taking the floor, whatever its words
MIN_READABLE_MS = 250  # shorter voiced speech may be the start of either: decide at the next boundary
MIN_WORD_MS = 150  # finished speech voiced for less holds no word; what the recognizer reads in it is made up


# Fillers the recognizer spells freely: "Mmm", "mhm", "N-n-n", "uh-huh", "hmm", "ahh"; whisper base also writes
# a hummed "mm-hm" as one made-up word after "mm" ("MMCharm"), and no English word starts with "mm".
_FILLER = re.compile(r"^(m+(h+m+)?|mm[a-z]*|n+|h+m+|u+h+(u+h+)?|a+h+|o+h+|u+m+|e+r+m*)$")


def words(text: str) -> list[str]:
    return [w for w in re.sub(r"[^a-z ]", " ", text.lower().replace("-", "")).split() if w]


def is_backchannel_word(w: str) -> bool:
    return w in BACKCHANNELS or bool(_FILLER.match(w))


@dataclass
class Verdict:
    decision: str  # "interrupt", "backchannel", "echo", "noise" or "pending"
    words: list[str]


def classify(text: str, voiced_ms: float, ongoing: bool, own_words: set[str]) -> Verdict:
    """What overlapping speech means, from its transcript so far and how long it has been voiced."""
    ws = words(text)
    if not ws:
        if voiced_ms >= 2 * MAX_BACKCHANNEL_MS:
            return Verdict("interrupt", ws)  # sustained speech the recognizer cannot read: still the user's turn
        return Verdict("pending" if ongoing else "noise", ws)
    if not ongoing and voiced_ms < MIN_WORD_MS:
        return Verdict("noise", ws)
    if own_words and len(ws) >= 2 and sum(w in own_words for w in ws) >= 0.75 * len(ws):
        return Verdict("echo", ws)
    if all(is_backchannel_word(w) for w in ws) and voiced_ms <= MAX_BACKCHANNEL_MS:
        if ongoing and voiced_ms < MIN_READABLE_MS:
            return Verdict("pending", ws)
        return Verdict("backchannel", ws)
    return Verdict("interrupt", ws)


def only_stop(ws: list[str]) -> bool:
    """The user only asked the assistant to stop: yield and listen, with nothing to answer."""
    return bool(ws) and all(w in STOP_WORDS for w in ws) and any(not is_backchannel_word(w) for w in ws)


def only_filler(ws: list[str]) -> bool:
    """Only "mm-hm", "hmm", "uh-huh": nothing to answer (a "yes" or "okay" may answer a question, so it counts)."""
    return bool(ws) and all(_FILLER.match(w) for w in ws)
