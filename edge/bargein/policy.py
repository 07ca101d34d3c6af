"""The barge-in policy: what speech over the assistant's reply means, decided at a chunk boundary.

It does not depend on the model choosing to yield. From the overlapping
speech's audio (its level against the user's own, how long it has been
voiced) and its transcript it picks one of:

- interrupt   - the user takes the floor: stop, drop the rest, respond;
- backchannel - "mm-hm", "yeah", "right": go on;
- other       - speech aimed at someone else ("Hey Mark, ..."), or another voice calling someone: go on;
- background  - speech well below the user's level (a TV, a far talker), or in a voice that is not the
                user's at any level (edge/bargein/voice.py): go on;
- echo        - the assistant's own words heard back: go on;
- noise / pending - nothing readable yet: go on (pending keeps playback ducked).

Before speech in the user's voice stops the reply on its words alone, a
larger recognizer may read it again (`reread`): names at the start of
overlapping speech are what a small one misreads most.
"""
from __future__ import annotations

import re
import statistics
from collections import deque
from collections.abc import Callable

import numpy as np

from edge.bargein import words as barge_in
from edge.bargein.murmur import murmur
from edge.bargein.voice import VoiceCue
from edge.detect.level import speech_level_db
from edge.frontend.base import Decision, Overlap

# A voice well under the user's level that the voice cue does not clearly call the user's is a radio or a far
# talker: the user's own speech over the reply measured at most ~8 dB under their level (the echo canceller),
# and scored 0.68-0.80 against their profile in `bench duplex`; a news voice 11 dB under scored 0.63.
QUIET_DB = 8.0
QUIET_SIM = 0.70
MIN_LEVEL_MS = 300.0  # speech needed before its level says anything (a boundary right after an onset waits)

# Who a user might turn to instead of the assistant. Kin and endearments first, then common first names.
KIN = frozenset("""
honey sweetie sweetheart darling babe mom mum mommy dad daddy grandma grandpa kids guys everyone sis bro
""".split())
ADDRESSEES = KIN | frozenset("""
buddy mate dude son boss doctor sir madam
james john robert michael mike william david dave richard rick joseph joe thomas tom charles charlie
chris christopher daniel dan matthew matt anthony tony mark paul steven steve andrew andy kevin brian
george edward ed ryan jacob jake gary eric jonathan stephen larry justin scott brandon ben benjamin
sam samuel greg gregory alex alexander patrick jack dennis peter tyler aaron henry nathan adam zach
kyle walter harold jeremy ethan carl keith roger arthur terry sean christian austin noah lucas liam
mary patricia jennifer jen linda elizabeth liz barbara susan jessica sarah sara karen nancy lisa
betty margaret sandra ashley kimberly kim emily donna michelle carol amanda dorothy melissa deborah
stephanie rebecca laura sharon cynthia kathleen amy shirley angela helen anna brenda pamela nicole
emma samantha katherine kate christine debra rachel catherine carolyn janet maria heather diane julie
joyce victoria olivia kelly christina lauren joan evelyn judith megan cheryl andrea hannah martha
jacqueline frances gloria ann teresa kathryn sophia grace rose alice julia ava mia lily chloe zoe
""".split())
ASSISTANT_NAMES = frozenset({"venus", "assistant", "computer"})
GREETINGS = frozenset({"hey", "hi", "hello", "yo", "oi", "listen", "look", "ok", "okay", "oh"})
CALLS = frozenset({"hey", "hi", "hello", "yo", "oi"})  # greetings that call someone ("oh", "okay" need not)
# Words a greeting is followed by that call nobody ("Hey, you!", "Hi there", "Hey, thanks.").
NOT_NAMES = frozenset("""
you there it this that what how why who where when can could would will do does is are am was thanks thank
so well now just all again sorry guys man stop wait many more most much maybe made make here
i me my we our us your he his she her they their the a an and but
""".split())
# Words that open speech by taking the floor: the user wants the assistant to stop, whoever else is named.
FLOOR_WORDS = frozenset({"stop", "wait", "hold", "pause", "sorry", "excuse", "hang", "no", "cancel", "quiet",
                         "enough", "shush", "hush", "shut"})
_TOKEN = re.compile(r"[A-Za-z']+")


def _one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by one letter changed, added or dropped ("sara"/"sarah", "marc"/"mark")."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)):] == b[i + 1:]


def name_like(low: str) -> bool:
    """A listed name, or a misreading of one by a letter (names of four letters or more; common words never)."""
    if low in ADDRESSEES:
        return True
    if len(low) < 4 or low in NOT_NAMES or low in barge_in.STOP_WORDS or barge_in.is_backchannel_word(low):
        return False
    return any(len(n) >= 4 and _one_edit(low, n) for n in ADDRESSEES)


def addressed_elsewhere(text: str) -> str | None:
    """The name the speech is addressed to, when it opens or closes by calling someone other than the assistant.

    A vocative stands apart: after a greeting ("Hey Mark"), before a comma ("Sarah, ..."), or after a
    closing comma ("..., Mike?"). Kin words and endearments count wherever they open the speech. The
    recognizer misreads names on overlapping speech, so a word set apart after a call ("Hey, dealer.") is a
    name whatever it reads as, and a name misread by one letter ("Sara, ...") still counts.
    """
    tokens = _TOKEN.findall(text)
    if not tokens or any(t.lower() in ASSISTANT_NAMES for t in tokens[:3]):
        return None  # nothing said, or the assistant is the one called
    i = 0
    while i < len(tokens) and tokens[i].lower() in GREETINGS:
        i += 1
    if i < len(tokens):
        raw, low = tokens[i], tokens[i].lower()
        after = text[text.find(raw) + len(raw):].lstrip()[:1] if raw in text else ""
        greeted = i > 0 and raw[:1].isupper() and raw not in ("I", "I'm") and low not in barge_in.STOP_WORDS
        # "Hey, dealer." for "Hey Peter, ...": one word after a call, set apart, that is not a common reply
        called = any(t.lower() in CALLS for t in tokens[:i]) and (after in (",", ".", "!", "?") or
                                                                  i == len(tokens) - 1) and \
            low not in NOT_NAMES and low not in barge_in.STOP_WORDS and not barge_in.is_backchannel_word(low)
        if low in KIN or greeted or called or (after == "," and name_like(low)):
            return raw
    tail = text.rstrip(" ?.!").rsplit(",", 1)
    if len(tail) == 2 and len(tokens) >= 3:
        last = _TOKEN.findall(tail[1])
        if len(last) == 1 and last[0].lower() in ADDRESSEES:
            return last[0]
    return None


def opens_an_address(text: str) -> bool:
    """Only a greeting so far ("Hey, my...", "Oh, hi"): the name that says whom it is for is still to come."""
    ws = barge_in.words(text)
    return 0 < len(ws) <= 3 and ws[0] in GREETINGS and not any(w in barge_in.STOP_WORDS and w not in GREETINGS
                                                               for w in ws)


def by_words(o: Overlap) -> Decision:
    """The transcript rule alone (no levels): for a frontend stepped without the judge, as in tests."""
    v = barge_in.classify(o.text, o.voiced_ms, o.ongoing, o.own_words)
    return Decision(v.decision, v.words, "from the words alone")


class BargeInPolicy:
    # The user's own level is measured while the assistant is silent; over playback the echo canceller
    # attenuates near speech by up to ~8 dB (measured), so the margin to call speech background is wider.
    def __init__(self, background_margin_db: float = 12.0, background_floor_db: float = -45.0,
                 min_user_voiced_ms: float = 300.0, voice: VoiceCue | None = None,
                 reread: Callable[[np.ndarray], tuple[str, float] | None] | None = None) -> None:
        """`reread` reads the overlapping speech again with a larger recognizer, (text, ms) or None when it
        failed: asked only before speech in the user's voice is taken for an interruption."""
        self.background_margin_db = background_margin_db
        self.voice = voice  # whose voice it is (None: decided from level and words alone)
        self.reread = reread
        self.background_floor_db = background_floor_db  # used until the user's own level is known
        self.min_user_voiced_ms = min_user_voiced_ms
        self._user_levels: deque[float] = deque(maxlen=8)

    def observe_user(self, level_db: float, voiced_ms: float) -> None:
        """A stretch of the user's speech while the assistant was silent: the level to compare against."""
        if voiced_ms >= self.min_user_voiced_ms and level_db > -90:
            self._user_levels.append(level_db)

    @property
    def user_level_db(self) -> float | None:
        return statistics.median(self._user_levels) if self._user_levels else None

    def decide(self, o: Overlap) -> Decision:
        ws = barge_in.words(o.text)
        level = speech_level_db(o.audio)
        ref = self.user_level_db
        sim, thr = None, None
        d = lambda kind, why: Decision(kind, ws, why, level, ref, sim, thr)  # noqa: E731
        if o.ongoing and o.voiced_ms < MIN_LEVEL_MS:
            return d("pending", "too little speech to weigh its level yet")
        if level is not None:
            floor = ref - self.background_margin_db if ref is not None else self.background_floor_db
            if level < floor:
                return d("background", f"speech at {level:.0f} dBFS, under the user's level by more than "
                                       f"{self.background_margin_db:.0f} dB" if ref is not None else
                         f"speech at {level:.0f} dBFS, under {floor:.0f} dBFS")
        base = barge_in.classify(o.text, o.voiced_ms, o.ongoing, o.own_words)
        if base.decision in ("pending", "noise", "echo", "backchannel"):
            return d(base.decision, {"pending": "too little to read yet", "noise": "nothing readable",
                                     "echo": "the reply's own words", "backchannel": "a backchannel"}[base.decision])
        name = addressed_elsewhere(o.text)
        if self.voice is not None and o.voiced_ms >= self.voice.min_voice_ms:
            sim, thr = self.voice.similarity(o.audio), self.voice.threshold_for(o.voiced_ms)
            if sim is not None and sim < thr:
                who = f"a voice other than the user's (similarity {sim:.2f}, under {thr:.2f})"
                return d("other", f"{who}, addressed to {name}") if name is not None else d("background", who)
            if sim is not None and sim < QUIET_SIM and level is not None and ref is not None and \
                    level < ref - QUIET_DB and name is None:
                return d("background", f"a quiet voice ({ref - level:.0f} dB under the user's level) that is not "
                                       f"clearly the user's (similarity {sim:.2f}, under {QUIET_SIM:.2f})")
        if name is not None:
            return d("other", f"addressed to {name}")
        if o.ongoing and opens_an_address(o.text):
            return d("pending", "a greeting: whom it is for comes next")
        hum = murmur(o.text, o.audio, o.voiced_ms, o.score, o.ongoing)
        if hum is not None:  # a short vocalisation misread as words (edge/bargein/murmur.py)
            return d("pending" if o.ongoing else "backchannel", hum)
        if self.reread is not None and not (ws and ws[0] in FLOOR_WORDS):
            # The first reading found no vocative, but names are what a small recognizer misreads most on
            # overlapping speech ("Mom" as "Um"): a larger one reads it again before the reply is stopped.
            got = self.reread(o.audio)
            if got is not None:
                text, ms = got
                again = addressed_elsewhere(text)
                if again is not None:
                    dec = d("other", f"addressed to {again}, read again as {text!r}")
                    dec.reread, dec.reread_ms = text, ms
                    return dec
                why = f"; read again as {text!r}, no one else called"
                dec = d("interrupt", f"speech aimed at the assistant in the user's voice (similarity {sim:.2f}){why}"
                        if sim is not None else f"speech aimed at the assistant{why}")
                dec.reread, dec.reread_ms = text, ms
                return dec
        if sim is not None:
            return d("interrupt", f"speech aimed at the assistant in the user's voice (similarity {sim:.2f})")
        return d("interrupt", "speech aimed at the assistant")
