"""Timers and reminders said in words: "set a timer for two minutes", "remind me in ten minutes to check the
oven", "remind me at 7:30 to call Ana", "how long is left on my timer?", "cancel the timer".

Read from the words alone, numbers by the spoken-arithmetic reader (edge/language/spoken_math.py). `timer_request`
says whether the words are about a timer at all (the embedded default delegates them, the harness's timer
claims them) and what they hold; whether the duration makes sense is the timer's to judge, so that a bad
one ("banana minutes") still gets a spoken answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.language.spoken_math import number_words_at, read_tokens, time_units

# The conversion reader's units of time, and the short forms a transcript writes for them.
UNITS = {**time_units(), "sec": 1.0, "secs": 1.0, "min": 60.0, "mins": 60.0, "hr": 3600.0, "hrs": 3600.0}
_NOUN = r"(?:timers?|reminders?|alarms?)"
_HOW_TO = re.compile(r"\b(how (?:do|can|would|should) (?:i|you|we)|how to|what is an? |what's an? |what are)\b")
_CANCEL = re.compile(rf"\b(cancel|stop|delete|remove|clear|turn off|switch off|forget|scrap|kill)\b.*\b{_NOUN}")
_LEFT = re.compile(rf"\b(left|remaining|remain|to go|how long until|how long till|how long before|"
                   rf"when (?:is|will|does)|time is on)\b.*\b{_NOUN}|\b{_NOUN}\b.*\b(left|remaining|to go)\b|"
                   rf"\b(check|status of) (?:on )?(?:the |my )?{_NOUN}")
_SET_TIMER = re.compile(r"\b(set|start|make|create|put on|give me|need|want|begin|run|add|new)\b.*\btimer\b|"
                        r"\btimer (?:for|of|on)\b")
# "Set a time for two minutes": "timer" as a recognizer sometimes hears it, taken only with a duration.
_SET_TIME = re.compile(r"\bset (?:a|the|me a) time for\b")
_REMIND = re.compile(r"\b(remind (?:me|us)(?! (?:what|who|whom|whose|how|where|why|which|of)\b)|"
                     r"(?:set|make|create|add|give me|i need|i want) (?:a |an )?reminder)\b")
_ALARM = re.compile(r"\b((?:set|make|create|start|put|need|want) (?:an |a |my |the )?alarm|alarm (?:for|at)|"
                    r"wake me(?: up)? (?:at|in))\b")
_MIN_SEC = re.compile(r"\b(?:for|of) (\d{1,2}):([0-5]\d)\b(?!\s*(?:a\.?\s?m|p\.?\s?m|in the|at night|tonight))")
_ALL = re.compile(r"\b(all|every|both)\b|\b(timers|reminders|alarms)\b")
# Words that swap when a request is said back: "remind me to call my mother" -> "call your mother".
_SWAP = {"me": "you", "my": "your", "i": "you", "myself": "yourself", "mine": "yours", "i'm": "you're",
         "we": "you", "us": "you", "our": "your", "ourselves": "yourselves", "i'll": "you'll", "i've": "you've"}
_ONES = "one two three four five six seven eight nine ten eleven twelve".split()
_MERIDIEM = re.compile(r"^\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?|in the morning|in the afternoon|in the evening|at night|"
                       r"tonight|o'?clock)")


@dataclass(frozen=True)
class ClockTime:
    hour: int  # 0-23 when said so (19:30, "7 pm"); 1-12 when morning or evening was not said
    minute: int
    meridiem: str  # "am", "pm", or "" when not said


@dataclass(frozen=True)
class TimerRequest:
    kind: str  # "set" | "left" | "cancel"
    what: str  # "timer" | "reminder" | "alarm"
    seconds: float | None = None  # the duration said ("for ninety seconds", "in ten minutes")
    at: ClockTime | None = None  # a clock time said ("at 7:30")
    task: str = ""  # what to be reminded of, said back ("check the oven", "call your mother")
    unclear: str = ""  # a duration's words that are not a number ("banana minutes")
    every: bool = False  # "cancel all the timers"


def _clean(text: str) -> str:
    low = text.lower().replace("’", "'")
    return re.sub(r"\s+", " ", low).strip()


# "How long is left?" right after a timer is set names none: said to a voice assistant, it asks about one.
_BARE_LEFT = re.compile(r"^(?:and |so |okay |ok |um |hey )?how (?:long|much time|many minutes|many seconds) "
                        r"(?:is |are |have i got |do i have |do we have |is there |'s )?(?:left|remaining|to go)"
                        r"(?: now| on (?:it|that|this))?\s*[?.!]*$")


# A number written as code or with a sign ("1e308", "10**100", "2^8", "-5") is no length a person says: reading
# only its digits set 5 minutes for "1e308 seconds" and for "-5 minutes".
_ODD_NUMBER = re.compile(r"(?<![\w.])[-\u2212]\s*\d[\d.,]*(?:\s+[a-z]+)?|"
                         r"\d[\d.,]*(?:e[+-]?\d+|\s*(?:\*\*|\^)\s*[-+]?\d+)(?:\s+[a-z]+)?")


def timer_request(text: str) -> TimerRequest | None:
    """What the words ask of a timer, a reminder or an alarm; None when they are not about one."""
    low = _clean(text)
    if _BARE_LEFT.search(low):
        return TimerRequest("left", "timer")
    if not re.search(rf"\b{_NOUN}|\bremind (?:me|us)\b|\bwake me\b|{_SET_TIME.pattern}", low) or _HOW_TO.search(low):
        return None
    what = "reminder" if re.search(r"\bremind", low) else "alarm" if re.search(r"\balarm|\bwake me\b", low) \
        else "timer"
    if _CANCEL.search(low):
        return TimerRequest("cancel", what, every=bool(_ALL.search(low)))
    if _LEFT.search(low):
        return TimerRequest("left", what)
    seconds, unclear = duration(low)
    odd = _ODD_NUMBER.search(low)
    if odd:
        seconds, unclear = None, odd.group(0)
    mss = _MIN_SEC.search(low) if what == "timer" else None
    if seconds is None and mss:  # a kitchen timer "for 7:30" runs seven and a half minutes
        seconds = 60.0 * int(mss.group(1)) + int(mss.group(2))
    at = clock_time_in(low, bare=what == "alarm") if seconds is None and not unclear else None
    asked = _SET_TIMER.search(low) or _REMIND.search(low) or _ALARM.search(low) or \
        (seconds is not None and re.search(r"\btimer\b", low))  # "a five minute timer"
    if not asked and not (_SET_TIME.search(low) and seconds is not None):
        return None  # "my timer broke": about a timer, not asking for one; "set a time for the meeting"
    task = _task(re.sub(r"\s+", " ", text.replace("’", "'")).strip()) if what == "reminder" else ""
    return TimerRequest("set", what, seconds, at, task, unclear)


def duration(text: str) -> tuple[float | None, str]:
    """The first duration in the words, in seconds ("two minutes", "an hour and a half", "1 hour 20 minutes",
    "a 5-minute"), and the words before a unit that are not a number ("banana minutes"), if any."""
    toks = read_tokens(text)
    total, found, k = 0.0, False, 0
    while k < len(toks):
        kind, val = toks[k]
        if kind == "word" and val in UNITS:
            amount = _amount_before(toks, k)
            if amount is None:
                if found:
                    break
                before = [str(v) for kd, v in toks[max(0, k - 1):k] if kd == "word"]
                return None, " ".join(before + [str(val)])
            total += amount * UNITS[str(val)]
            found = True
            # "an hour and a half", "two minutes and a quarter"
            if toks[k + 1:k + 3] == [("op", "+?"), ("word", "a")] and k + 3 < len(toks) and toks[k + 3][0] == "num" \
                    and float(toks[k + 3][1]) < 1:  # type: ignore[arg-type]
                total += float(toks[k + 3][1]) * UNITS[str(val)]  # type: ignore[arg-type]
                k += 3
            # another part must follow at once ("1 hour 20 minutes", "two minutes and thirty seconds")
            nxt = k + 1 + (toks[k + 1:k + 2] == [("op", "+?")])
            if not (nxt + 1 < len(toks) and toks[nxt][0] == "num" and toks[nxt + 1][0] == "word"
                    and toks[nxt + 1][1] in UNITS):
                break
            k = nxt + 1
            continue
        k += 1
    return (total if found else None), ""


def _amount_before(toks: list[tuple[str, object]], k: int) -> float | None:
    """The amount said before the unit at k: '2', 'one and a half', 'a', 'half an', 'a quarter of an', '5-'."""
    prev = toks[k - 1] if k >= 1 else None
    if prev == ("op", "-") and k >= 2 and toks[k - 2][0] == "num":  # "a 5-minute timer"
        prev, k = toks[k - 2], k - 1
    if prev is not None and prev[0] == "num":
        value = float(prev[1])  # type: ignore[arg-type]
        # "one and a half hours": 1, and, a, 0.5
        if value < 1 and toks[k - 4:k - 1] and len(toks[k - 4:k - 1]) == 3 and toks[k - 4][0] == "num" \
                and toks[k - 3:k - 1] == [("op", "+?"), ("word", "a")]:
            return float(toks[k - 4][1]) + value  # type: ignore[arg-type]
        return value
    if prev in (("word", "a"), ("word", "an")):
        before = toks[k - 2] if k >= 2 else None
        if before == ("word", "half"):
            return 0.5
        if before == ("word", "of") and k >= 3 and toks[k - 3] == ("word", "quarter"):
            return 0.25
        return 1.0
    if prev == ("word", "quarter"):  # "a quarter hour"
        return 0.25
    return None


def clock_time_in(text: str, bare: bool = False) -> ClockTime | None:
    """A clock time said after 'at', 'for' or 'by': '7:30', '7 pm', 'seven thirty', 'noon', '19:45'; with
    `bare` (an alarm: "an alarm for 7"), an hour alone too."""
    for m in re.finditer(r"\b(?:at|for|by)\s+", text):
        rest = text[m.end():]
        got = _clock_at_start(rest, bare)
        if got is not None:
            return got
    return None


def _clock_at_start(rest: str, bare: bool = False) -> ClockTime | None:
    if rest.startswith(("noon", "midday")):
        return ClockTime(12, 0, "pm")
    if rest.startswith("midnight"):
        return ClockTime(0, 0, "am")
    m = re.match(r"(\d{1,2})(?:[:.](\d{2}))?\b", rest)
    if m:
        hour, minute, after = int(m.group(1)), int(m.group(2) or 0), rest[m.end():]
        if m.group(2) is None and not _MERIDIEM.match(after) and not bare:
            return None  # "at 7" alone could be anything; "at 7 pm", "at 7 o'clock", "at 7:30" are times
    else:
        words = re.findall(r"[a-z']+", rest)
        if not words or words[0] not in _ONES:
            return None
        hour, minute = _ONES.index(words[0]) + 1, 0
        consumed = words[0]
        if len(words) > 1 and words[1] == "oh" and len(words) > 2 and words[2] in _ONES[:9]:
            minute, consumed = _ONES.index(words[2]) + 1, " ".join(words[:3])  # "seven oh five"
        elif len(words) > 1:
            got = number_words_at(words, 1)
            if got is not None and 0 < got[0] < 60:
                minute, consumed = int(got[0]), " ".join(words[:got[1]])
        after = rest[len(consumed):] if rest.startswith(consumed) else rest
        if minute == 0 and not _MERIDIEM.match(after) and not bare:
            return None  # "at seven" alone: too easily something else ("at seven years old")
    if hour > 23 or minute > 59:
        return None
    mer = _MERIDIEM.match(after)
    word = mer.group(1).replace(".", "").replace(" ", "") if mer else ""
    meridiem = "am" if word in ("am", "inthemorning") else "pm" if word in (
        "pm", "intheafternoon", "intheevening", "atnight", "tonight") else ""
    if hour > 12:
        meridiem = ""
    return ClockTime(hour, minute, meridiem)


def _opens_with_duration(text: str) -> bool:
    """The words begin with a duration ("five minutes to go", "an hour"), not merely hold one later on."""
    toks = read_tokens(text)
    for k, (kind, val) in enumerate(toks[:6]):
        if kind == "word" and val in UNITS:
            return _amount_before(toks, k) is not None
        if not (kind == "num" or (kind, val) in _AMOUNT_WORDS):
            return False
    return False


_AMOUNT_WORDS = {("op", "+?"), ("op", "-"), ("word", "a"), ("word", "an"), ("word", "half"), ("word", "quarter"),
                 ("word", "of"), ("word", "about")}


def _task(said: str) -> str:
    """What to be reminded of, as said back to the listener: 'remind me in ten minutes to check my oven' ->
    'check your oven'. Empty when the words do not say."""
    m = re.search(r"\b(?:remind (?:me|us)|reminder)\b(.*)$", said, re.I)
    rest = m.group(1) if m else ""
    t = re.search(r"\b(?:to|that|about|of)\b\s+(.+)$", rest, re.I)
    if not t:
        return ""
    task = t.group(1)
    # The time may come after the task: "to check the oven in ten minutes", "to call Ana at 7:30".
    for cut in re.finditer(r"\s+(?:in|at|after|for|by)\s+", task):
        tail = task[cut.end():]
        if _opens_with_duration(tail.lower()) or _clock_at_start(tail.lower()) is not None:
            task = task[:cut.start()]
            break
    task = re.sub(r"[,\s]*\bplease\b", "", task, flags=re.I)
    task = re.sub(r"^(?:i |we )(?:need |have |must |should )to\s+", "", task, flags=re.I)
    task = re.sub(r"[^A-Za-z0-9' -]+", " ", task).strip()
    return " ".join(_SWAP.get(w.lower(), w) for w in task.split())
