"""Word error rate with one normalisation for reference and hypothesis, and errors counted per word kind.

Both sides are lower-cased, stripped of punctuation, contractions expanded
and number words turned into digits ("twenty one" -> "21", "three" -> "3",
"7:30" -> "7 30"), so a recognizer is not charged for writing a number
either way. Errors are counted on a Levenshtein alignment; a substitution
or deletion is charged to the reference word it falls on, so the error rate
of a word kind (numbers, names) is its errors over its count in the
reference. Insertions count only in the overall rate.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                    "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
            "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
            "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
            "twentieth": 20, "thirtieth": 30}
CONTRACTIONS = {"what's": "what is", "it's": "it is", "i'm": "i am", "don't": "do not", "can't": "can not",
                "cannot": "can not", "that's": "that is", "let's": "let us", "i'll": "i will", "you're": "you are",
                "where's": "where is", "how's": "how is", "there's": "there is", "isn't": "is not",
                "won't": "will not", "we're": "we are", "i've": "i have", "okay": "ok", "o'clock": "oclock"}
FILLERS = [(re.compile(r"\bm+-?h*m+\b"), "mhm"), (re.compile(r"\buh-?huh\b"), "uhhuh"),
           (re.compile(r"\bmm+\b"), "mm")]


def _numbers(words: list[str]) -> list[str]:
    """Runs of number words as one number each: units after tens join ("forty two"), hundreds multiply."""
    out: list[str] = []
    value: int | None = None
    last = ""  # kind of the previous number word: unit, tens, hundred
    for w in words:
        if w.endswith(("st", "nd", "rd", "th")) and w[:-2].isdigit():
            w = w[:-2]  # "21st" -> "21", the same as "twenty first"
        if w in ORDINALS:
            o = ORDINALS[w]
            if value is not None and last == "tens" and o < 10:  # "twenty first"
                out.append(str(value + o))
            else:
                out.extend(([str(value)] if value is not None else []) + [str(o)])
            value, last = None, ""
            continue
        if w in TENS and (value is None or last == "hundred"):
            value, last = (value or 0) + TENS[w], "tens"
        elif w in UNITS and (value is None or (last == "tens" and UNITS[w] < 10) or last == "hundred"):
            value, last = (value or 0) + UNITS[w], "unit"
        elif w == "hundred" and value is not None and last == "unit" and value < 10:
            value, last = value * 100, "hundred"
        elif w in UNITS or w in TENS:  # a new number starts ("seven thirty")
            out.append(str(value))
            value, last = (UNITS.get(w, TENS.get(w))), ("unit" if w in UNITS else "tens")
        else:
            if value is not None:
                out.append(str(value))
                value = None
            last = ""
            out.append(w)
    if value is not None:
        out.append(str(value))
    return out


def normalise(text: str) -> list[str]:
    t = text.lower().replace("’", "'")
    for pattern, canon in FILLERS:
        t = pattern.sub(canon, t)
    t = re.sub(r"(\d),(\d{3})\b", r"\1\2", t)  # 1,000 -> 1000
    t = re.sub(r"(\d)\s*%", r"\1 percent", t)
    t = re.sub(r"\b([ap])\.?\s?m\b\.?", r"\1m", t)  # a.m. / a m / am
    t = re.sub(r"(\d):(\d\d)", r"\1 \2", t)  # 7:30 -> 7 30
    t = re.sub(r"(\d)-(\d)", r"\1 to \2", t)
    t = t.replace("+", " plus ").replace("=", " equals ")
    t = re.sub(r"hundred and (?=(%s)\b)" % "|".join([*UNITS, *TENS]), "hundred ", t)
    words = []
    for w in re.sub(r"[^\w'\s-]", " ", t).replace("-", " ").split():
        w = w.strip("'")
        words.extend(CONTRACTIONS.get(w, w).split())
    return [w for w in _numbers(words) if w]


def join_times(ref: list[str], hyp: set[str]) -> list[str]:
    """"one fifteen" is written "1:15" or "115": two reference numbers whose digits the hypothesis has as
    one number count as that one number, so writing a time without its colon is no error."""
    out: list[str] = []
    for w in ref:
        if out and out[-1].isdigit() and w.isdigit() and len(w) == 2 and out[-1] + w in hyp:
            out[-1] += w
        else:
            out.append(w)
    return out


def is_number(word: str) -> bool:
    return word.isdigit()


def align(ref: list[str], hyp: list[str]) -> tuple[list[bool], int]:
    """Per reference word whether it was recognized wrong (substituted or deleted), and the insertions."""
    n, m = len(ref), len(hyp)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]), d[i - 1][j] + 1, d[i][j - 1] + 1)
    wrong = [False] * n
    inserted = 0
    i, j = n, m
    while i or j:  # walk back one optimal path
        if i and j and d[i][j] == d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            wrong[i - 1] = ref[i - 1] != hyp[j - 1]
            i, j = i - 1, j - 1
        elif i and d[i][j] == d[i - 1][j] + 1:
            wrong[i - 1] = True
            i -= 1
        else:
            inserted += 1
            j -= 1
    return wrong, inserted


@dataclass
class Tally:
    """Errors and reference words, overall and per kind of word."""
    errors: int = 0
    words: int = 0
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind -> [errors, words]

    def add(self, ref_text: str, hyp_text: str, names: frozenset[str] = frozenset()) -> int:
        hyp = normalise(hyp_text)
        ref = join_times(normalise(ref_text), set(hyp))
        wrong, inserted = align(ref, hyp)
        errors = sum(wrong) + inserted
        self.errors += errors
        self.words += len(ref)
        for word, bad in zip(ref, wrong):
            kind = "numbers" if is_number(word) else "names" if word in names else None
            if kind:
                k = self.kinds.setdefault(kind, [0, 0])
                k[0] += bad
                k[1] += 1
        return errors

    def rate(self, kind: str | None = None) -> float:
        e, n = (self.errors, self.words) if kind is None else self.kinds.get(kind, [0, 0])
        return 100.0 * e / n if n else 0.0
