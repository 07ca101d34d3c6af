"""`venus-edge bench asr`: word error rate of every speech recognizer on a generated spoken set, side by side.

The set (edge/bench/asr_set.py) is made fresh from a seed: household
questions, commands, times, names and short replies, in every English
espeak-ng voice on the machine with variants at three rates and in the
Piper voice, clean, in a reverberant room, and under background noise at
20 dB and 10 dB SNR. A quarter of it is held out: the same templates filled
with a different seed. Each recognizer hears exactly the same audio; the
last lines give, per recognizer, the overall WER, the WER on number words
and on names, and the real-time factor (recognition compute / audio length).
`--confidence` adds how sure the first recognizer was of what it heard right
and of what it misheard (edge/bench/asr_confidence.py).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from edge.audio_format import RATE
from edge.backends.locate import ModelMissing
from edge.bench.asr_confidence import measure, table
from edge.bench.asr_set import Utterance, generate, in_room
from edge.bench.espeak_voices import english_voices
from edge.bench.spoken import say
from edge.bench.wer import Tally
from edge.detect.asr import MODELS, Heard, Transcriber
from edge.speech.piper.voice import PiperVoice
from kernels.resample import resample


# Words of the domain for the `prompt` setting: generic household vocabulary, none of the set's names.
DOMAIN_PROMPT = "Turn on the lights, set a timer, remind me at 7:30 a.m., thermostat, weather, shopping list."
SETTINGS = "beamN (beam search of N), prompt (household words as previous text), ts (decode with timestamps), " \
           "numbers (a sum heard with a broken operand read again, as the runtime does)"
# What a plain run compares: tiny.en as it judges speech over a reply (greedy) and the user's turns' default.
DEFAULT_MODELS = "tiny.en,base:beam5+numbers"


class NumberMinded:
    """A recognizer followed by the runtime's second reading of a sum heard wrong (edge/detect/number_reading)."""

    def __init__(self, asr: Transcriber) -> None:
        self.asr = asr
        self.heard: Heard | None = None  # as the frontend takes it: a sum read again, as sure as its score

    def transcribe(self, audio: np.ndarray) -> str:
        from edge.detect.number_reading import reread

        first = self.asr.transcribe(audio)
        self.heard = self.asr.heard
        again = reread(self.asr, first)
        if again is not None:
            self.heard = again.heard(self.heard)
        return again.text if again is not None else first


def recognizer(spec: str, threads: int) -> Transcriber | NumberMinded:
    """`model[:setting+setting]`, e.g. `tiny.en:beam5+prompt`; one clear sentence for a bad one."""
    model, _, settings = spec.partition(":")
    if model not in MODELS:
        raise ValueError(f"unknown recognizer {model!r}; use some of {','.join(MODELS)}")
    kw: dict = {}
    numbers = False
    for s in filter(None, settings.split("+")):
        if s.startswith("beam") and s[4:].isdigit() and int(s[4:]) >= 1:
            kw["beam_size"] = int(s[4:])
        elif s == "prompt":
            kw["prompt"] = DOMAIN_PROMPT
        elif s == "ts":
            kw["timestamps"] = True
        elif s == "numbers":
            numbers = True
        else:
            raise ValueError(f"unknown setting {s!r} in {spec!r}; settings are {SETTINGS}")
    asr = Transcriber(threads, model, **kw)
    return NumberMinded(asr) if numbers else asr


def speak(u: Utterance, piper: PiperVoice) -> np.ndarray:
    if u.voice == "piper":
        return resample(piper.sentence_audio(u.text), piper.sample_rate, RATE).astype(np.float32)
    return say(u.text, u.voice, u.wpm)


def condition(row: dict) -> str:
    return "+".join(filter(None, ["room" if row["room"] else "", f"noise{row['snr_db']:.0f}dB"
                                  if row["snr_db"] is not None else ""])) or "clean"


def breakdown(rows: list[dict], models: list[str]) -> list[str]:
    """WER per room condition and per kind of voice, so a figure can be traced to what makes it."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(condition(r), []).append(r)
        if r["voice"] != "piper":
            groups.setdefault(f"espeak {r['wpm']} wpm", []).append(r)
            groups.setdefault(f"espeak +{r['voice'].partition('+')[2] or 'plain'}", []).append(r)
        else:
            groups.setdefault("piper", []).append(r)
    lines = []
    for name in sorted(groups):
        cells = []
        for m in models:
            t = Tally()
            for r in groups[name]:
                t.add(r["text"], r[m], frozenset(r["names"]))
            cells.append(f"{m} {t.rate():.1f}%")
        lines.append(f"{name:<18}({len(groups[name])}) " + ", ".join(cells))
    return lines


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench asr", description=__doc__.split("\n\n")[0])
    p.add_argument("--utterances", type=int, default=240, help="utterances in the set, held-out part included "
                                                               "(default 240)")
    p.add_argument("--seed", type=int, default=1, help="seed of the set (the held-out part uses another)")
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"recognizers to compare, each model[:setting+...] (default {DEFAULT_MODELS}); "
                        f"settings: {SETTINGS}")
    p.add_argument("--threads", type=int, default=1, help="recognizer threads (default 1)")
    p.add_argument("--out", type=Path, help="write every utterance's reference and transcripts here (JSON)")
    p.add_argument("--confidence", action="store_true",
                   help="also say how sure the first recognizer was of what it heard right and what it misheard")
    args = p.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    if not models:
        print(f"venus-edge bench asr: --models is empty; use some of {','.join(MODELS)}.", file=sys.stderr)
        return 2
    if args.utterances < 1:
        print("venus-edge bench asr: --utterances must be at least 1.", file=sys.stderr)
        return 2
    try:
        recognizers = {m: recognizer(m, args.threads) for m in models}
        piper = PiperVoice(threads=args.threads)
        langs = english_voices()
    except (ValueError, ModelMissing, FileNotFoundError, subprocess.SubprocessError) as exc:
        print(f"venus-edge bench asr: {exc}.", file=sys.stderr)
        return 2

    utterances = generate(args.utterances, args.seed, langs)
    print(f"{len(utterances)} utterances ({sum(u.held_out for u in utterances)} held out), "
          f"{len({u.voice for u in utterances})} voices from {len(langs)} espeak-ng English voices and Piper; "
          f"conditions: clean, room (RT60 400 ms), noise 20 dB SNR, room + noise 10 dB SNR")
    tallies = {(m, part): Tally() for m in models for part in ("main", "held-out", "all")}
    compute = {m: 0.0 for m in models}
    seconds = 0.0
    rows = []
    sure_rows: list[dict] = []
    for i, u in enumerate(utterances):
        audio = in_room(speak(u, piper), u.room, u.snr_db, seed=args.seed * 100003 + i)
        seconds += len(audio) / RATE
        row = {"text": u.text, "names": sorted(u.names), "voice": u.voice, "wpm": u.wpm, "room": u.room, "snr_db": u.snr_db,
               "held_out": u.held_out}
        for m, rec in recognizers.items():
            t0 = time.perf_counter()
            if args.confidence and m == models[0]:
                sure = measure(rec, audio, u.text)
                heard = sure["heard"]
                row["confidence"] = {k: sure[k] for k in ("logprob", "worst_word", "errors", "words")}
                sure_rows.append(sure)
                t0 += sure["word_s"]  # the word test's pass is not the recognizer's own cost
            else:
                heard = rec.transcribe(audio)
            compute[m] += time.perf_counter() - t0
            for part in ("held-out" if u.held_out else "main", "all"):
                errors = tallies[(m, part)].add(u.text, heard, u.names)
            row[m] = heard
            if errors:
                print(f"  {m} {u.voice}@{u.wpm or '-'} {'room' if u.room else ''}"
                      f"{f' snr{u.snr_db:.0f}' if u.snr_db is not None else ''}: {u.text!r} -> {heard!r}")
        rows.append(row)
    if args.out:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(rows, indent=1))
        except OSError as exc:
            print(f"venus-edge bench asr: could not write {args.out} ({exc.strerror}); the figures follow.",
                  file=sys.stderr)
    print(f"\n{seconds:.0f} s of speech")
    for line in breakdown(rows, models):
        print(line)
    for part in ("main", "held-out"):
        for m in models:
            t = tallies[(m, part)]
            print(f"{part:<9}{m:<8} wer {t.rate():.1f}% (numbers {t.rate('numbers'):.1f}%, "
                  f"names {t.rate('names'):.1f}%) over {t.words} words")
    if args.confidence:
        print(f"\n{models[0]}:")
        for line in table(sure_rows):
            print(line)
    for m in models:
        t = tallies[(m, "all")]
        print(f"asr {m}: wer {t.rate():.1f}% (numbers {t.rate('numbers'):.1f}%, names {t.rate('names'):.1f}%) "
              f"rtf {compute[m] / max(seconds, 1e-9):.3f}")
    return 0

