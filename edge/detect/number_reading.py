"""A second, number-minded reading of a spoken sum the recognizer heard with a broken operand.

Whisper base reads espeak-ng's formant voices poorly, and numbers worst of all: "nine times six" comes out
"time time 6", "three plus four" as "free plus 4", "eleven minus two" as "minimum minus 2". The calculator
cannot work those out, and the decision model then answers nonsense ("The time 6 is 12:00 PM.").

Only when the first transcript is clearly the frame of a sum (an operator word: plus, minus, times, divided
by, multiplied by, or "time" next to a number) and yet is no sum the calculator can work out, the same audio
is read again:

- decoded once more with a few spoken sums as previous text (the encoding is reused: only the decoder runs);
- every word right beside an operator that is not a number is tried as each of the numbers that sound most
  like it (espeak-ng's phonemes): "free", "for", "time", "Tim" put back as 3, 4, 9, 10, and "time" beside a
  number written "times";
- a transcript that repeats its own start ("2 times 7 2 times") is tried without the repetition;
- an ordinal before "time" is the number before "times" ("What is 6th time made?": 6 times, then "made" tried
  as the numbers that sound like it).

Each candidate that is a whole sum is scored by whisper itself, without any prompt: the mean log-probability
of its tokens given the audio. The best one replaces the transcript when whisper finds it at most
`MAX_LOSS` less probable per token than its own first reading. Nothing else is ever read again, so words are
not made up outside a sum; what was read and why goes to the journal (`Reread`).
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from edge.backends.locate import ModelMissing
from edge.detect.asr import Heard
from edge.language.spoken_math import arithmetic, work_out

# Spoken sums as previous text: whisper then expects number words and operators (not the household's words).
PROMPT = "What is nine times six? What's fifteen plus seven? How much is seventy two divided by eight? " \
         "What is forty minus three?"
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
                "hundred").split()
OPERATORS = re.compile(r"\b(plus|minus|times|multiplied by|divided by)\b", re.I)
_TIME_BY_NUMBER = re.compile(r"\b(\d+|" + "|".join(NUMBER_WORDS) + r")\s+times?\b|\btimes?\s+(\d+|"
                             + "|".join(NUMBER_WORDS) + r")\b", re.I)
_OPERATOR_WORDS = {"plus", "minus", "times", "time", "divided", "multiplied", "by"}
_WORD = re.compile(r"[A-Za-z']+|\d+(?:\.\d+)?|[^\sA-Za-z\d']+")
# How much less probable per token (natural log) than whisper's own first reading a sum may be and still be
# taken: on the sums it was tuned on (espeak-ng voices, seeds other than the benches'), right readings lost up
# to about 1.3 and whisper's own repetitions of a short clip scored about 1.6 over their cut.
MAX_LOSS = 1.5
PER_SLOT = 6  # numbers tried in each misheard place, those that sound most like the word heard there
_FRAME_WORDS = {"is", "what", "what's", "whats", "much", "how", "by"}


@dataclass
class Reread:
    """A second reading: what was heard first, what was taken, and the scores that decided it."""
    first: str
    text: str  # the transcript to use (the first one when nothing better was found)
    why: str
    scores: dict[str, float] = field(default_factory=dict)  # candidate -> mean log-probability per token

    @property
    def changed(self) -> bool:
        return self.text != self.first

    def heard(self, first: Heard | None) -> Heard | None:
        """How sure whisper is of the text taken: as of its first reading, or, for a sum taken in its place, as of
        that sum (its score, the same mean log-probability per token)."""
        if not self.changed or first is None:
            return first
        return Heard(self.text, self.scores.get(self.text, first.logprob), first.no_speech)

    def journal(self) -> dict:
        best = sorted(self.scores.items(), key=lambda kv: -kv[1])[:4]
        return {"first": self.first, "taken": self.text, "why": self.why,
                "scores": {k: round(v, 3) for k, v in best}}


_ORDINAL_TIME = re.compile(r"\b(\d+)(?:st|nd|rd|th) times?\b", re.I)


def ordinal_times(text: str) -> str:
    """"6th time" written as the "6 times" it was: the s of "times" run into the number is heard as an ordinal
    ("What is six times eight?" came out "What is 6th time made?")."""
    return _ORDINAL_TIME.sub(lambda m: f"{m[1]} times", text)


def broken_sum(text: str) -> bool:
    """Whether the words are the frame of a sum (an operator word) that the calculator cannot work out."""
    framed = ordinal_times(text)
    frame = OPERATORS.search(framed) or _TIME_BY_NUMBER.search(framed)
    if not frame or not re.search(r"[A-Za-z\d]", framed[frame.end():]):
        return False  # no operator, or nothing after it yet ("What is nine times": a turn still spoken)
    return work_out(text) is None


def _is_number(word: str) -> bool:
    return word.lower() in NUMBER_WORDS or bool(re.fullmatch(r"\d+(?:\.\d+)?", word))


def slots(text: str) -> list[tuple[list[str], int, int]]:
    """Where a number may have been misheard: each word right beside an operator that is not a number, and the
    two words just before or after an operator, which may be one number heard as two ("eighteen" as "it in" or
    "at ten").

    Returns the text cut into pieces (words, numbers, punctuation), the index of each such place's first piece
    and how many pieces it spans.
    """
    pieces = _WORD.findall(text)
    words = [k for k, p in enumerate(pieces) if re.match(r"[A-Za-z'\d]", p)]
    out = []
    for pos, k in enumerate(words):
        w = pieces[k].lower()
        if _is_number(w) or w in _FRAME_WORDS:
            continue
        near = [pieces[words[j]].lower() for j in (pos - 1, pos + 1) if 0 <= j < len(words)]
        if not any(n in _OPERATOR_WORDS for n in near) or (w in _OPERATOR_WORDS and w != "time"):
            continue
        if w == "time" and any(_is_number(n) for n in near):
            continue  # "time" beside a number is "times" heard without its s: an operator, not an operand
        out.append((pieces, k, 1))
    for pos, k in enumerate(words):
        w = pieces[k].lower()
        by = w == "by" and pos > 0 and pieces[words[pos - 1]].lower() in ("divided", "multiplied")
        if w not in _OPERATOR_WORDS - {"by", "divided", "multiplied"} and not by:
            continue
        before = (pos - 3, pos - 2) if by else (pos - 2, pos - 1)  # before "divided by", after "by"
        for a, b in (before, (pos + 1, pos + 2)):
            if a < 0 or b >= len(words) or words[b] != words[a] + 1:
                continue  # not two words side by side (punctuation between them)
            pair = [pieces[words[a]].lower(), pieces[words[b]].lower()]
            if any(x in _OPERATOR_WORDS or x in _FRAME_WORDS for x in pair) or _is_number(pair[0]):
                continue  # a number's start is what goes astray ("at ten"); "4 for" is a number and a word
            out.append((pieces, words[a], 2))
    return out


def substitutions(text: str, per_slot: int = PER_SLOT) -> list[str]:
    """The text with one misheard operand put back as each of the numbers that sound most like it.

    Sounds are espeak-ng's phonemes (the Piper voice's own front end): "free" is one phoneme from "three",
    "time" two from "nine", "Tim" one from "ten". Numbers go in as digits, as whisper writes them.
    """
    places = slots(text)
    if not places:
        return []
    try:
        heard = sounds([" ".join(pieces[k:k + n]) for pieces, k, n in places])
        numbers = number_sounds()
    except (OSError, subprocess.SubprocessError, ModelMissing):
        return []  # no espeak-ng: the second reading still runs
    out: list[str] = []
    for (pieces, k, span), sound in zip(places, heard):
        near = sorted(numbers, key=lambda n: (_distance(sound, numbers[n]), n))[:per_slot]
        out += [_times(_join(pieces[:k] + [str(n)] + pieces[k + span:])) for n in near]
    return out


def _times(text: str) -> str:
    """"time" beside a number written as the operator it is: whisper scores "9 times 6" far above "9 time 6"
    (and so above the wrong "1 time 6" it prefers by habit)."""
    return re.sub(r"\b(\d+) time\b(?! (?:is|was)\b)|\btime (?=\d)", lambda m: f"{m[1]} times" if m[1] else "times ",
                  text)


_NUMBERS = list(range(21)) + list(range(30, 100, 10))
_number_sounds: dict[int, str] = {}


def number_sounds() -> dict[int, str]:
    """Each number's phonemes (0-20 and the tens), read once."""
    if not _number_sounds:
        said = [NUMBER_WORDS[n] if n < 20 else NUMBER_WORDS[18 + n // 10] for n in _NUMBERS]
        _number_sounds.update(zip(_NUMBERS, sounds(said)))
    return _number_sounds


def sounds(words: list[str]) -> list[str]:
    """espeak-ng's phonemes (IPA, stress and length marks dropped) of each word."""
    from edge.backends.locate import espeak_binary

    text = "".join(re.sub(r"[^A-Za-z'\d ]", " ", w).strip() + ".\n" for w in words)
    run = subprocess.run([espeak_binary(), "-q", "--ipa", "-v", "en-us"], input=text, capture_output=True,
                         text=True, timeout=30, check=True)
    lines = [re.sub("[ˈˌːˑ ]", "", line) for line in run.stdout.splitlines() if line.strip()]
    return lines if len(lines) == len(words) else [w.lower() for w in words]  # letters, if espeak merged lines


def _distance(a: str, b: str) -> int:
    """Edit distance between two phoneme strings."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def repeat_cut(text: str) -> str | None:
    """The text without a repetition of its own start ("2 times 7 2 times": whisper repeating itself on a short
    clip padded with silence), or None when it has none."""
    words = text.split()
    for cut in range(2, len(words) - 1):
        rest = words[cut:]
        if len(rest) >= 2 and [w.lower().strip(".,?!") for w in rest] == \
                [w.lower().strip(".,?!") for w in words[:len(rest)]]:
            return " ".join(words[:cut])
    return None


def _join(pieces: list[str]) -> str:
    text = ""
    for p in pieces:
        text += p if not text or not re.match(r"[A-Za-z'\d]", p) else " " + p
    return text


def reread(asr, first: str) -> Reread | None:
    """A number-minded second reading of the utterance `asr` transcribed last, or None when `first` is not a
    broken sum. `asr` is an edge.detect.asr.Transcriber (its `reread` and `likelihood`)."""
    if not broken_sum(first):
        return None
    second = asr.reread(PROMPT)
    framed = ordinal_times(first)
    cut = repeat_cut(framed)
    # The second reading's own broken operands are tried too: it often hears the number's shape better.
    tried = substitutions(framed) + (substitutions(ordinal_times(second)) if second and second != first else [])
    candidates = [c for c in dict.fromkeys([second, framed] + ([cut] if cut else []) + tried)
                  if c and arithmetic(c) is not None]
    if not candidates:
        return Reread(first, first, f"read again with sums as the prompt ({second!r}): still no sum", {})
    scores = dict(zip([first] + candidates, asr.likelihood([first] + candidates)))
    best = max(candidates, key=lambda c: scores[c])
    loss = scores[first] - scores[best]
    if loss > MAX_LOSS:
        return Reread(first, first, f"the best sum, {best!r}, is {loss:.2f} less probable per token than the first "
                                    f"reading (over {MAX_LOSS})", scores)
    source = "the second reading" if best == second else "the words without their repetition" if best == cut \
        else "the ordinal beside 'time' read as a number" if best == framed \
        else "a number that sounds like the word beside the operator"
    return Reread(first, best, f"a sum frame with no sum; {source} is the most probable sum, {loss:.2f} per token "
                               f"under the first reading", scores)
