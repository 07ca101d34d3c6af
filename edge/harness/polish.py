"""Result polishing: short speakable text, no markup, numbers and units readable aloud.

Structured results (JSON, ISO times) are first said in words by `edge.language.say`.
"""
from __future__ import annotations

import re

from edge.language.say import say_text
from edge.language.plain_text import plain
from edge.protocol.strip import strip_protocol_tokens
from edge.language.sentences import split_sentences

MAX_SENTENCES = 3
MAX_CHARS = 400

# Units after a number: the symbol as written -> the words to say (singular form is not attempted).
UNITS = [
    ("km/h", "kilometers per hour"), ("mph", "miles per hour"), ("m/s", "meters per second"),
    ("°C", "degrees Celsius"), ("°F", "degrees Fahrenheit"), ("°", "degrees"), ("%", "percent"),
    ("km", "kilometers"), ("cm", "centimeters"), ("mm", "millimeters"), ("kg", "kilograms"),
    ("mg", "milligrams"), ("g", "grams"), ("lbs", "pounds"), ("lb", "pounds"), ("ml", "milliliters"),
    ("mL", "milliliters"), ("l", "liters"), ("L", "liters"), ("GB", "gigabytes"), ("MB", "megabytes"),
    ("kB", "kilobytes"), ("GHz", "gigahertz"), ("MHz", "megahertz"), ("Hz", "hertz"), ("kWh", "kilowatt hours"),
    ("kW", "kilowatts"), ("W", "watts"), ("V", "volts"), ("ms", "milliseconds"), ("sec", "seconds"),
    ("min", "minutes"), ("h", "hours"), ("hrs", "hours"), ("m", "meters"), ("ft", "feet"), ("mi", "miles"),
]
CURRENCY = {"$": "dollars", "€": "euros", "£": "pounds", "¥": "yen"}
_NUM = r"\d+(?:\.\d+)?"
_UNIT_RE = re.compile(rf"({_NUM})\s?({'|'.join(re.escape(u) for u, _ in sorted(UNITS, key=lambda x: -len(x[0])))})"
                      r"(?![A-Za-z])")
_UNIT_WORDS = dict(UNITS)
_CURRENCY_RE = re.compile(rf"([$€£¥])\s?({_NUM})(\s?(?:million|billion|thousand|[kKmMbB]n?)\b)?")
_SCALE = {"k": "thousand", "K": "thousand", "m": "million", "M": "million", "mn": "million", "b": "billion",
          "B": "billion", "bn": "billion"}
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_RANGE = re.compile(rf"({_NUM})\s?[-–]\s?({_NUM})")
_BIG = re.compile(r"\b(\d{7,12})\b")


def _big(match: re.Match) -> str:
    n = int(match.group(1))
    for size, word in ((10**9, "billion"), (10**6, "million")):
        if n >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + f" {word}"
    return match.group(1)


def _currency(match: re.Match) -> str:
    sym, amount, scale = match.group(1), match.group(2), (match.group(3) or "").strip()
    scale = _SCALE.get(scale, scale)
    return " ".join(p for p in (amount, scale, CURRENCY[sym]) if p)


def strip_markup(text: str) -> str:
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)  # code blocks are not speakable
    text = re.sub(r"<[^>]{1,200}>", " ", text)  # HTML tags
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: keep the label
    text = re.sub(r"https?://\S+", "a link", text)
    text = re.sub(r"^\s{0,3}(?:#{1,6}|>|[-*+•]|\d+[.)])\s+", "", text, flags=re.MULTILINE)  # headings, lists
    text = re.sub(r"^\s*\|?\s*:?-{3,}.*$", " ", text, flags=re.MULTILINE)  # table rules
    text = text.replace("|", ", ")
    text = re.sub(r"(\*\*|__|\*|_|`|~~)(?=\S)(.+?)(?<=\S)\1", r"\2", text)  # emphasis, inline code
    text = re.sub(r"[*_`#~^]+", " ", text)
    return re.sub(r'[{}\[\]"“”]+', " ", text)  # what is left of JSON or quoting is not said


def readable_numbers(text: str) -> str:
    text = _THOUSANDS.sub("", text)
    text = _CURRENCY_RE.sub(_currency, text)
    text = _RANGE.sub(r"\1 to \2", text)
    text = _UNIT_RE.sub(lambda mt: f"{mt.group(1)} {_UNIT_WORDS[mt.group(2)]}", text)
    text = _BIG.sub(_big, text)
    return text.replace("&", " and ").replace("+/-", " plus or minus ").replace("~", " about ")


# Pictographs (emoji, dingbats and their joiners) have no words: a voice says nothing useful for them.
_PICTOGRAPHS = re.compile("[\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d]+")
# A chat model's opening of a reply, a sentence of its own: with at most three sentences said, it took one of them.
_OPENER = re.compile(r"^(?:certainly|sure|of course|absolutely|great question|good question)[!.,]\s+(?=\S)", re.I)


def failure_words(reason: str) -> str:
    """A failure told to the user."""
    return polish(f"Sorry, I couldn't finish that: {reason}.")


def polish(text: str, max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_CHARS) -> str:
    """Speakable text: protocol tokens and markup removed, at most `max_sentences`, about `max_chars`."""
    text = strip_markup(say_text(strip_protocol_tokens(plain(text))))
    text = _OPENER.sub("", _PICTOGRAPHS.sub(" ", text).strip())
    text = readable_numbers(text)
    text = re.sub(r"\s*\n\s*", ". ", text.strip())
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r"([.!?])[.,]+", r"\1", text)
    text = re.sub(r"^[,.;:\s]+", "", text).strip()
    out = []
    for s in split_sentences(text)[:max_sentences]:
        if out and len(" ".join(out)) + len(s) + 1 > max_chars:
            break
        out.append(s)
    text = " ".join(out)
    if len(text) > max_chars:  # one very long sentence: cut at a word boundary
        text = text[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "."
    if text and text[-1] not in ".!?":
        text += "."
    return text
