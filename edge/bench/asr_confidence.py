"""`venus-edge bench asr --confidence`: how sure the recognizer is of what it heard right and of what it misheard.

For the first recognizer compared (by default the user's turns' own: base, beam 5, the number reading), each
utterance's transcript is kept with whisper's mean log-probability per token (as the frontend takes it, after
the number reading) and its least probable content word (edge/detect/confidence.py). The table says, for each
threshold, what share of the transcripts heard right would be asked back and what share of the misheard ones
(any word wrong; badly: 30 % of the words or more) would be caught, so the default frontend's `ask_back_logprob`
and `ask_back_word` are chosen from it.
"""
from __future__ import annotations

import time

import numpy as np

from edge.bench.wer import Tally, normalise
from edge.detect.asr import Heard
from edge.detect.confidence import content

LOGPROB_STEPS = (-0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9, -1.0, -1.2)
WORD_STEPS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
BADLY = 0.3  # a share of the words wrong from which a transcript is misheard badly


def measure(rec, audio: np.ndarray, reference: str) -> dict:
    """One utterance through `rec` (a Transcriber or the bench's NumberMinded): what was heard and how surely."""
    asr = getattr(rec, "asr", rec)
    text = rec.transcribe(audio)
    heard: Heard | None = getattr(rec, "heard", None)
    t0 = time.perf_counter()
    words = asr.word_probabilities(text) if text else []
    word_s = time.perf_counter() - t0
    errors = Tally().add(reference, text)
    worst = min((p for w, p in words if content(w)), default=1.0)
    return {"heard": text, "errors": errors, "words": max(1, len(normalise(reference))),
            "logprob": heard.logprob if heard is not None else None, "worst_word": worst, "word_s": word_s}


def _share(rows: list[dict], caught) -> str:
    return f"{100 * sum(map(caught, rows)) / len(rows):5.1f}%" if rows else "    -"


def table(rows: list[dict]) -> list[str]:
    """For each threshold: asked back among those heard right, caught among the misheard and the badly misheard."""
    scored = [r for r in rows if r["logprob"] is not None]
    right = [r for r in scored if r["errors"] == 0]
    wrong = [r for r in scored if r["errors"] > 0]
    badly = [r for r in wrong if r["errors"] / r["words"] >= BADLY]
    out = [f"confidence over {len(scored)} transcripts: {len(right)} heard right, {len(wrong)} misheard "
           f"({len(badly)} badly, {int(BADLY * 100)} % of the words or more)",
           f"mean log-probability per token: right {_median(right, 'logprob')}, misheard {_median(wrong, 'logprob')}, "
           f"badly {_median(badly, 'logprob')} (medians)",
           f"least probable content word: right {_median(right, 'worst_word')}, misheard "
           f"{_median(wrong, 'worst_word')}, badly {_median(badly, 'worst_word')} (medians)",
           "threshold                      asked back (right)  caught (misheard)  caught (badly)"]
    for t in LOGPROB_STEPS:
        low = (lambda r, t=t: r["logprob"] < t)
        out.append(f"logprob < {t:<5}                    {_share(right, low)}             {_share(wrong, low)}"
                   f"            {_share(badly, low)}")
    for t in WORD_STEPS:
        low = (lambda r, t=t: r["worst_word"] < t)
        out.append(f"word < {t:<5}                       {_share(right, low)}             {_share(wrong, low)}"
                   f"            {_share(badly, low)}")
    for t in LOGPROB_STEPS[2:6]:
        for w in WORD_STEPS[:3]:
            either = (lambda r, t=t, w=w: r["logprob"] < t or r["worst_word"] < w)
            out.append(f"logprob < {t:<5} or word < {w:<5}   {_share(right, either)}             "
                       f"{_share(wrong, either)}            {_share(badly, either)}")
    cost = [r["word_s"] for r in scored if r["heard"]]
    if cost:
        out.append(f"word probabilities cost {1e3 * float(np.median(cost)):.0f} ms a transcript (median)")
    return out


def _median(rows: list[dict], key: str) -> str:
    return f"{float(np.median([r[key] for r in rows])):.2f}" if rows else "-"
