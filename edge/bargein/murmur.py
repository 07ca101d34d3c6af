"""Short vocalisations are not words: a hummed "mm-hm" the recognizer wrote down as words ("And then make
him", "I'm a chum", "M.M.A.C.M") over the assistant's reply lets the reply go on.

Judged, once the words alone would stop the reply, by three cues together:
- duration: a backchannel is short (at most `MAX_MS` voiced) and holds no word that takes the floor, and no
  question;
- the recognizer's own confidence: its mean token log-probability for what it wrote is low, and a
  backchannel's spelling ("Mm-hmm.", "Hmm.") scores nearly as well on the same audio (`MARGIN`);
- energy shape: the words written claim more syllables than the audio's energy has peaks (a hum has one or
  two), or most of what was written is single letters and hums ("M M T N").
"""
from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from edge.audio_format import RATE
from edge.bargein import words as heard

MAX_MS = 1000.0  # voiced speech longer than this is taking the floor, whatever it sounds like
LOW_CONFIDENCE = -0.8  # mean log-probability per token under which the recognizer was unsure
MARGIN = 1.6  # a backchannel's spelling within this of the words written: the audio may well be a hum
SPELLINGS = ("Mm-hmm.", "Hmm.", "Uh-huh.", "Mm.", "Mhm.")
FLOOR = frozenset({"stop", "wait", "hold", "pause", "sorry", "excuse", "hang", "no", "cancel", "quiet", "enough",
                   "shush", "hush", "shut", "what", "why", "how", "who", "where", "when"})
_VOWELS = re.compile(r"[aeiouy]+")
FRAME = RATE // 100  # 10 ms


def syllables(ws: list[str]) -> int:
    """Syllables the written words claim (vowel groups; a word of letters without vowels counts one)."""
    return sum(max(1, len(_VOWELS.findall(w))) for w in ws)


def energy_peaks(audio: np.ndarray, dip_db: float = 6.0) -> int:
    """Syllable-like peaks of the audio's energy: maxima 10 dB within the loudest, each set apart from the
    one before by a dip of `dip_db`."""
    n = len(audio) // FRAME
    if n < 3:
        return 0
    e = 10 * np.log10(np.mean(np.asarray(audio[:n * FRAME], np.float64).reshape(n, FRAME) ** 2, axis=1) + 1e-10)
    e = np.convolve(e, np.ones(5) / 5, mode="same")  # 50 ms smoothing: one peak per syllable, not per period
    top, peaks, low, high = e.max(), 0, np.inf, -np.inf
    for x in e:
        if x < top - 10:
            low = min(low, x)
            continue
        if peaks == 0 or (high - low >= dip_db and x - low >= dip_db):
            peaks, high, low = peaks + 1, x, x
        else:
            high, low = max(high, x), min(low, x)
        low = min(low, x)
    return peaks


def lettered(ws: list[str]) -> bool:
    """Most of what was written is single letters or hums ("M M T N", "M. Anson")."""
    if not ws:
        return False
    return sum(len(w) == 1 or heard.only_filler([w]) for w in ws) * 2 >= len(ws) + (len(ws) % 2)


def murmur(text: str, audio: np.ndarray, voiced_ms: float,
           score: Callable[[list[str]], list[float]] | None, ongoing: bool = False) -> str | None:
    """Why speech the words alone would take for an interruption is a short vocalisation, or None.

    While the speech goes on, only letters and hums hold the decision a chunk: a first word or two read against
    the audio so far (fewer peaks, an unsure recognizer) is no reason to talk over someone stopping the reply."""
    ws = heard.words(text)
    if not ws or voiced_ms > MAX_MS or len(ws) > 4 or "?" in text or any(w in FLOOR for w in ws):
        return None
    if lettered([w for w in heard.words(text.replace("'", "")) if w not in ("i", "a")]):  # "I'm done" is words
        return f"{text!r} is letters and hums, {voiced_ms:.0f} ms voiced"
    if ongoing:
        return None
    claimed, peaks = syllables(ws), energy_peaks(audio)
    if peaks and claimed >= peaks + 2:
        return f"{text!r} claims {claimed} syllables where the voice has {peaks}"
    if score is None:
        return None
    got = score([text] + list(SPELLINGS))
    if len(got) < 2 or got[0] > LOW_CONFIDENCE or max(got[1:]) < got[0] - MARGIN:
        return None
    return (f"{text!r} read unsure (log-probability {got[0]:.2f}), a backchannel nearly as likely "
            f"({max(got[1:]):.2f})")
