"""Spoken arithmetic and unit conversions, worked out from the words alone (no eval).

"What is twelve times seven?", "what's 3.5 plus 4", "how many centimeters are in
five inches", "convert 20 degrees celsius to fahrenheit". The transcript is
read into tokens (numbers written or spoken, operators, units), then a small
precedence parser computes the value. Anything it does not fully understand
gives None, so the caller can leave the question to a model.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_ONES = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_ONES["oh"] = 0
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}

# Operator phrases, longest first so "divided by" wins over "by". Values: (kind, symbol).
_OPS = [
    ("to the power of", "^"), ("raised to", "^"), ("multiplied by", "*"), ("divided by", "/"), ("times", "*"),
    ("plus", "+"), ("added to", "+"), ("and", "+?"), ("minus", "-"), ("take away", "-"), ("less", "-"),
    ("over", "/"), ("x", "*"), ("into", "in"),
]
_SYMBOLS = {"+": "+", "-": "-", "*": "*", "×": "*", "/": "/", "÷": "/", "^": "^"}

# Units: name forms -> (quantity, factor to the quantity's base unit). Temperature is handled apart.
_UNITS: dict[str, tuple[str, float]] = {}
for forms, kind, factor in [
    ("millimeter millimeters millimetre millimetres mm", "length", 0.001),
    ("centimeter centimeters centimetre centimetres cm", "length", 0.01),
    ("meter meters metre metres", "length", 1.0),
    ("kilometer kilometers kilometre kilometres km", "length", 1000.0),
    ("inch inches", "length", 0.0254), ("foot feet", "length", 0.3048), ("yard yards", "length", 0.9144),
    ("mile miles", "length", 1609.344),
    ("gram grams g", "mass", 1.0), ("kilogram kilograms kilo kilos kg", "mass", 1000.0),
    ("ounce ounces oz", "mass", 28.349523125), ("pound pounds lb lbs", "mass", 453.59237),
    ("milliliter milliliters millilitre millilitres ml", "volume", 0.001),
    ("liter liters litre litres", "volume", 1.0), ("gallon gallons", "volume", 3.785411784),
    ("cup cups", "volume", 0.2365882365), ("pint pints", "volume", 0.473176473),
    ("second seconds", "time", 1.0), ("minute minutes", "time", 60.0), ("hour hours", "time", 3600.0),
    ("day days", "time", 86400.0), ("week weeks", "time", 604800.0),
]:
    for form in forms.split():
        _UNITS[form] = (kind, factor)
_TEMPS = {"celsius": "C", "centigrade": "C", "fahrenheit": "F", "kelvin": "K"}
# "Fahrenheit" as recognizers hear it in unusual voices, and as it is misspelled.
_MISHEARD_UNITS = re.compile(r"\b(?:foreign ?height|fair ?(?:en|in|and|n)? ?height|fahren ?height|farenheit|"
                             r"fahrenheight|farenheight)\b")
_OP_WORDS = {"+": "plus", "-": "minus", "*": "times", "/": "divided by", "^": "to the power of"}


@dataclass(frozen=True)
class Worked:
    value: float
    text: str  # the answer as a sentence to speak


def say_number(x: float) -> str:
    """A number as it reads well aloud: whole numbers plainly, others to at most two decimals."""
    if math.isfinite(x) and abs(x - round(x)) < 1e-9:
        return f"{int(round(x)):,}".replace(",", "") if abs(x) < 10_000 else f"{int(round(x)):,}"
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _number_words(words: list[str], i: int) -> tuple[float, int] | None:
    """A number spelled in words from position i ("three hundred and forty two"); (value, next position)."""
    total = current = 0
    j, seen = i, False
    while j < len(words):
        w = words[j]
        if w in _ONES:
            current += _ONES[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w in _SCALES and seen:
            if _SCALES[w] == 100:
                current *= 100
            else:
                total += current * _SCALES[w]
                current = 0
        elif w == "and" and seen and j + 1 < len(words) and (words[j + 1] in _ONES or words[j + 1] in _TENS) \
                and j > i and words[j - 1] in _SCALES:
            j += 1
            continue
        else:
            break
        seen = True
        j += 1
    if not seen:
        return None
    return float(total + current), j


def _number(out: list[tuple[str, object]], value: float) -> None:
    """Append a number; "100 and 8" (a recognizer's digits for "one hundred and eight") is one number, 108."""
    if len(out) >= 2 and out[-1] == ("op", "+?") and out[-2][0] == "num" and 0 < value < 100 and ("word", "add") not in out and \
            value == int(value) and float(out[-2][1]) >= 100 and float(out[-2][1]) % 100 == 0:  # type: ignore[arg-type]
        out[-2:] = [("num", float(out[-2][1]) + value)]  # type: ignore[arg-type]
        return
    out.append(("num", value))


def _tokens(text: str) -> list[tuple[str, object]] | None:
    """('num', value) / ('op', symbol) / ('unit', name) / ('word', w) tokens of the question."""
    low = text.lower().replace("what's", "what is").replace("°", " degrees ")
    low = _MISHEARD_UNITS.sub("fahrenheit", low)
    low = re.sub(r"(\d),(\d{3})", r"\1\2", low)  # 1,000 -> 1000
    low = re.sub(r"(\d)\s*%", r"\1 percent", low)
    low = re.sub(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)", " ", low)  # 5km -> 5 km
    raw = re.findall(r"\d+(?:\.\d+)?|[a-z]+|[+\-*/×÷^]", low)
    out: list[tuple[str, object]] = []
    i = 0
    while i < len(raw):
        w = raw[i]
        if re.fullmatch(r"\d+(?:\.\d+)?", w):
            _number(out, float(w))
            i += 1
            continue
        if w in _SYMBOLS:
            out.append(("op", _SYMBOLS[w]))
            i += 1
            continue
        spelled = _number_words(raw, i)
        if spelled is not None:
            value, i = spelled
            if i + 1 < len(raw) and raw[i] == "point" and raw[i + 1] in _ONES:  # "three point five"
                digits = ""
                i += 1
                while i < len(raw) and raw[i] in _ONES and _ONES[raw[i]] < 10:
                    digits += str(_ONES[raw[i]])
                    i += 1
                value = float(f"{int(value)}.{digits}")
            _number(out, value)
            continue
        if w == "time" and out and out[-1][0] == "num" and i + 1 < len(raw) and (
                re.fullmatch(r"\d+(?:\.\d+)?", raw[i + 1]) or raw[i + 1] in _ONES or raw[i + 1] in _TENS):
            out.append(("op", "*"))  # "two time three": "times" heard without its s
            i += 1
            continue
        for phrase, sym in _OPS:
            parts = phrase.split()
            if raw[i:i + len(parts)] == parts:
                out.append(("op", sym))
                i += len(parts)
                break
        else:
            if w in ("squared", "cubed"):
                out.append(("post", 2.0 if w == "squared" else 3.0))
            elif w == "half" and out and out[-1] == ("word", "a") or w == "half" and not out:
                out.append(("num", 0.5))
            else:
                out.append(("word", w))
            i += 1
    return out


class _Parser:
    """Precedence climbing over the tokens of one expression: + - < * / < ^ < unary, root, squared."""

    def __init__(self, toks: list[tuple[str, object]]) -> None:
        self.t, self.i = toks, 0

    def peek(self) -> tuple[str, object] | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self) -> tuple[str, object]:
        tok = self.t[self.i]
        self.i += 1
        return tok

    def expr(self) -> float:
        value = self.term()
        while (tok := self.peek()) and tok[0] == "op" and tok[1] in ("+", "-", "+?"):
            self.take()
            right = self.term()
            value = value - right if tok[1] == "-" else value + right
        return value

    def term(self) -> float:
        value = self.power()
        while (tok := self.peek()) and tok[0] == "op" and tok[1] in ("*", "/"):
            self.take()
            right = self.power()
            if tok[1] == "/":
                if right == 0:
                    raise ZeroDivisionError
                value /= right
            else:
                value *= right
        return value

    def power(self) -> float:
        value = self.atom()
        tok = self.peek()
        if tok and tok[0] == "op" and tok[1] == "^":
            self.take()
            exponent = self.atom()
            if abs(exponent) > 64 or abs(value) > 1e6:
                raise OverflowError
            value = value ** exponent
        return value

    def atom(self) -> float:
        tok = self.peek()
        if tok is None:
            raise ValueError("an operand is missing")
        if tok == ("op", "-"):
            self.take()
            return -self.atom()
        if tok == ("word", "square") and self.i + 2 < len(self.t) and self.t[self.i + 1] == ("word", "root"):
            self.i += 2
            if self.peek() == ("word", "of"):
                self.take()
            value = self.atom()
            if value < 0:
                raise ValueError("the square root of a negative number")
            return math.sqrt(value)
        if tok[0] != "num":
            raise ValueError(f"unexpected {tok[1]!r}")
        self.take()
        value = float(tok[1])  # type: ignore[arg-type]
        nxt = self.peek()
        if nxt == ("word", "percent") and self.i + 1 < len(self.t) and self.t[self.i + 1] == ("word", "of"):
            self.i += 2
            return value / 100 * self.atom()
        if nxt is not None and nxt[0] == "post":
            self.take()
            value = value ** float(nxt[1])  # type: ignore[arg-type]
        return value


_LEAD = {"what", "is", "whats", "how", "much", "calculate", "compute", "tell", "me", "please", "can", "you",
         "could", "equals", "equal", "does", "do", "make", "makes", "the", "answer", "to", "of", "hey", "there", "so",
         "okay", "ok", "um", "uh", "well", "now", "then", "add", "in", "work", "out"}
_TRAIL = _LEAD | {"for"}  # "... for me" after a sum; before one, "for" is more likely a misheard "four"


MISHEARD_LEAD = 2  # words before a sum with no "what is" that may be a misheard question's start

_ASK = re.compile(r"\b(what is|what's|whats|how much is|how much|calculate|compute|work out|tell me what)\b", re.I)


def arithmetic(text: str) -> Worked | None:
    """The value of a spoken sum ("what is twelve times seven"), or None when the words are not one."""
    asked = list(_ASK.finditer(text))
    if asked:  # "Hey there, Tom. What is ...": what comes before the question is not part of it
        text = text[asked[-1].start():]
    toks = _tokens(text)
    if not toks:
        return None
    # The expression is the run from the first number (or "square root") to the last number; every word
    # outside it must be a question's filler, so "what is the population of two cities" is not a sum.
    starts = [k for k, t in enumerate(toks) if t[0] == "num" or t == ("word", "square") or t == ("op", "-")]
    ends = [k for k, t in enumerate(toks) if t[0] in ("num", "post")]
    if not starts or not ends:
        return None
    a, b = starts[0], ends[-1] + 1
    before = [t for t in toks[:a] if t[0] != "op" or t[1] != "+?"]
    after = [t for t in toks[b:] if t[0] != "op" or t[1] != "+?"]
    body = toks[a:b]
    if not asked and len(before) <= MISHEARD_LEAD and all(t[0] == "word" for t in before) and \
            any(t[0] == "op" and t[1] in ("+", "-", "*", "/", "^") for t in body):
        before = []  # "worth seven times three": a misheard "what's" before a whole sum
    if any(t[0] != "word" or t[1] not in _LEAD for t in before) or any(t[0] != "word" or t[1] not in _TRAIL
                                                                         for t in after):
        return None
    if not any(t[0] in ("op", "post") and t[1] != "+?" for t in body) and ("word", "root") not in body \
            and ("word", "percent") not in body:
        return None  # a number alone is no sum
    if any(t[1] == "+?" for t in body):  # "and" is a sum only in "add three and four"
        if not any(t == ("word", "add") for t in toks[:a]):
            return None
    p = _Parser(body)
    try:
        value = p.expr()
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if p.i != len(body) or not math.isfinite(value):
        return None
    said = " ".join(_say_token(t) for t in body)
    said = "the " + said if said.startswith("square") else said
    return Worked(value, f"{said[0].upper()}{said[1:]} is {say_number(value)}.")


def _say_token(tok: tuple[str, object]) -> str:
    kind, v = tok
    if kind == "num":
        return say_number(float(v))  # type: ignore[arg-type]
    if kind == "op":
        return _OP_WORDS.get(str(v), "plus")
    if kind == "post":
        return "squared" if v == 2.0 else "cubed"
    return str(v)


def _unit(words: list[str], k: int) -> tuple[str, int] | None:
    """The unit named at position k (skipping 'degrees' before a temperature scale); (unit, next)."""
    if k < len(words) and words[k] == "degrees":
        k += 1
        if k < len(words) and words[k] in _TEMPS:
            return _TEMPS[words[k]], k + 1
        return None
    if k < len(words) and words[k] in _TEMPS:
        return _TEMPS[words[k]], k + 1
    if k < len(words) and words[k] in _UNITS:
        return words[k], k + 1
    return None


def _convert(value: float, src: str, dst: str) -> float | None:
    if src in ("C", "F", "K") or dst in ("C", "F", "K"):
        if src not in ("C", "F", "K") or dst not in ("C", "F", "K"):
            return None
        c = value if src == "C" else (value - 32) * 5 / 9 if src == "F" else value - 273.15
        return c if dst == "C" else c * 9 / 5 + 32 if dst == "F" else c + 273.15
    (k1, f1), (k2, f2) = _UNITS[src], _UNITS[dst]
    return value * f1 / f2 if k1 == k2 else None


_SCALE_NAMES = {"C": "degrees Celsius", "F": "degrees Fahrenheit", "K": "kelvin"}


def _unit_name(unit: str, value: float) -> str:
    if unit in _SCALE_NAMES:
        return _SCALE_NAMES[unit]
    name = unit if len(unit) > 3 else {"mm": "millimeters", "cm": "centimeters", "km": "kilometers", "g": "grams",
                                         "kg": "kilograms", "oz": "ounces", "lb": "pounds", "lbs": "pounds",
                                         "ml": "milliliters"}.get(unit, unit)
    singular = {"inches": "inch", "feet": "foot"}
    if abs(value - 1) < 1e-9:
        return singular.get(name, name[:-1] if name.endswith("s") and name not in ("celsius",) else name)
    plural = {"inch": "inches", "foot": "feet"}
    return plural.get(name, name if name.endswith("s") else name + "s")


def conversion(text: str) -> Worked | None:
    """'how many X are in N Y', 'N Y in X', 'convert N Y to X': the converted amount, or None."""
    toks = _tokens(text)
    if not toks:
        return None
    words = [str(v) if k == "word" else ("#" if k == "num" else str(v)) for k, v in toks]
    nums = [float(v) for k, v in toks if k == "num"]  # type: ignore[arg-type]
    if len(nums) != 1:
        return None
    n_at = words.index("#")
    src = _unit(words, n_at + 1)
    if src is None:
        return None
    dst = None
    if "many" in words[:n_at]:  # how many X (are there) in N Y
        dst = _unit(words, words.index("many") + 1)
    else:
        rest = words[src[1]:]
        for k, w in enumerate(rest):
            if w in ("in", "to", "into"):
                dst = _unit(rest, k + 1)
                break
    if dst is None:
        return None
    value = _convert(nums[0], src[0], dst[0])
    if value is None:
        return None
    return Worked(value, f"{say_number(nums[0])} {_unit_name(src[0], nums[0])} is "
                         f"{say_number(value)} {_unit_name(dst[0], value)}.")


def work_out(text: str) -> Worked | None:
    """A conversion or a sum in the words, worked out; None when they hold neither."""
    return conversion(text) or arithmetic(text)


def numbers_in(text: str) -> list[float]:
    """Every number in the words, written or spoken ("it is 8.05", "eighty four")."""
    return [float(v) for k, v in _tokens(text) or [] if k == "num"]  # type: ignore[arg-type]


def read_tokens(text: str) -> list[tuple[str, object]]:
    """The words read as ('num', value) / ('op', symbol) / ('post', power) / ('word', w) tokens: numbers
    written or spoken ("ninety", "one hundred and twenty", "3.5", "a half") become values, the rest words."""
    return _tokens(text) or []


def number_words_at(words: list[str], i: int) -> tuple[float, int] | None:
    """A number spelled in words starting at words[i] ("forty five"): (value, the position after it), or None."""
    return _number_words(words, i)


def time_units() -> dict[str, float]:
    """Each word for a unit of time and its length in seconds ("minutes" -> 60)."""
    return {form: factor for form, (kind, factor) in _UNITS.items() if kind == "time"}
