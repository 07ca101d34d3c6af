"""`venus-edge bench wake`: how often the wake word is heard when said, and how often when it is not.

Detections: the wake word alone and at the start of a request ("Okay Nabu,
what time is it?"), said by every English espeak-ng voice on the machine
with variants at three rates and by the Piper voice at five speaking rates,
each clean, in a reverberant room, or under background noise (20 dB and,
with the room, 10 dB SNR), over a microphone's own noise floor (-60 dBFS;
digital silence is not what a microphone hears). The model's own cut-off is used: nothing here was
used to choose it, so every utterance is held out.

False wakes: an hour of household speech that never says the wake word
(the spoken recognition set's templates, edge/bench/asr_set.py, in the same
voices and rooms, with short pauses between sentences), streamed through one
detector as capture streams the microphone. It is synthesized once and kept
in the cache folder ($VENUS_EDGE_CACHE or ~/.cache/venus-edge, bench-wake/).

The last line is `wake <D>% detected, <F> false wakes/hour`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from edge.audio_format import RATE
from edge.backends.locate import ModelMissing, cache_dir
from edge.bench.asr import speak
from edge.bench.espeak_voices import english_voices
from edge.bench.asr_set import CONDITIONS, Utterance, generate, in_room, voices
from edge.detect.wake import WakeDetector, WakeWordError, count_wakes
from edge.speech.piper.voice import PiperVoice
from kernels.resample import resample

REQUESTS = ["What time is it?", "Turn off the kitchen light.", "What's the weather tomorrow?",
            "Set a timer for ten minutes."]
PIPER_RATES = (0.8, 0.9, 1.0, 1.15, 1.3)  # Piper length scales: faster to slower than its default
SET_VERSION = 1  # bump when the negative set's making changes, so a cached hour is not reused
FLOOR_RMS = 0.001  # a microphone's self-noise, -60 dBFS
CUTOFFS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97)


def positives(word: str, langs: list[str], seed: int) -> list[Utterance]:
    """The wake word alone and before a request, in every espeak voice and rate and at Piper's rates."""
    rng = random.Random(seed)
    spoken = [(v, wpm) for v, wpm in voices(langs) if v != "piper"]
    spoken += [("piper", k) for k in range(len(PIPER_RATES)) for _ in range(8)]  # every request and condition
    out = []
    for i, (voice, wpm) in enumerate(spoken):
        text = word if i % 2 == 0 else f"{word}, {rng.choice(REQUESTS)}"
        room, snr = CONDITIONS[i % len(CONDITIONS)]
        out.append(Utterance(text, frozenset(), voice, wpm, room, snr, True))
    return out


def say_it(u: Utterance, piper: PiperVoice) -> np.ndarray:
    if u.voice != "piper":
        return speak(u, piper)
    default = float(piper.scales[1])
    piper.scales[1] = default * PIPER_RATES[u.wpm]  # wpm holds the index of the Piper rate
    try:
        return resample(piper.sentence_audio(u.text), piper.sample_rate, RATE).astype(np.float32)
    finally:
        piper.scales[1] = default


def with_floor(audio: np.ndarray, seed: int) -> np.ndarray:
    return audio + FLOOR_RMS * np.random.default_rng(seed).standard_normal(len(audio)).astype(np.float32)


def peak_score(detector: WakeDetector, audio: np.ndarray, seed: int) -> float:
    """The highest score over the utterance, with 2 s of the room before it and 1 s after (a fresh stream)."""
    detector.restart()
    padded = with_floor(np.concatenate([np.zeros(2 * RATE, np.float32), audio, np.zeros(RATE, np.float32)]), seed)
    return max(float(detector.scores(padded[i:i + RATE]).max(initial=0.0)) for i in range(0, len(padded), RATE))


def negative_hour(word: str, langs: list[str], seed: int, seconds: float, piper: PiperVoice,
                  folder: Path) -> tuple[np.ndarray, Path, bool]:
    """`seconds` of household speech without the wake word, made once and cached; (audio, file, from cache)."""
    key = hashlib.sha256(json.dumps([SET_VERSION, seed, seconds, langs]).encode()).hexdigest()[:12]
    path = folder / f"negatives-{key}.flac"
    if path.is_file():
        audio, _ = sf.read(str(path), dtype="float32")
        return audio, path, True
    rng = np.random.default_rng(seed)
    pieces, total, n = [], 0, 0
    for u in generate(int(seconds), seed, langs, held_out_share=0.0):  # far more sentences than an hour needs
        if total >= seconds * RATE:
            break
        if word.lower() in u.text.lower():  # none of the templates says it; kept out should one ever do
            continue
        clip = in_room(speak(u, piper), u.room, u.snr_db, seed=seed * 100003 + n)
        gap = np.zeros(int(rng.uniform(0.2, 0.8) * RATE), np.float32)
        pieces += [clip, gap]
        total += len(clip) + len(gap)
        n += 1
    audio = np.concatenate(pieces)[:int(seconds * RATE)]
    folder.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), audio, RATE, subtype="PCM_16")
    return audio, path, False


def condition(u: Utterance) -> str:
    return "+".join(filter(None, ["room" if u.room else "", f"noise{u.snr_db:.0f}dB"
                                  if u.snr_db is not None else ""])) or "clean"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench wake", description=__doc__.split("\n\n")[0])
    p.add_argument("--wake", default="okay_nabu", help="the wake word (default okay_nabu)")
    p.add_argument("--hours", type=float, default=1.0, help="speech without the wake word, in hours (default 1)")
    p.add_argument("--seed", type=int, default=3, help="seed of the requests and of the speech without the word")
    p.add_argument("--cache", type=Path, default=None, help="where the synthesized speech is kept (default: "
                                                            "the cache folder's bench-wake/)")
    args = p.parse_args(argv)
    if not 0 < args.hours <= 24:
        print("venus-edge bench wake: --hours must be above 0 and at most 24.", file=sys.stderr)
        return 2
    try:
        detector = WakeDetector(args.wake)
        piper = PiperVoice()
        langs = english_voices()
    except (WakeWordError, ModelMissing, FileNotFoundError, subprocess.SubprocessError) as exc:
        print(f"venus-edge bench wake: {exc}", file=sys.stderr)
        return 2
    word = detector.word
    folder = args.cache or cache_dir().parent / "bench-wake"

    utterances = positives(word, langs, args.seed)
    groups: dict[str, list[float]] = {}
    peaks = []
    for i, u in enumerate(utterances):
        audio = in_room(say_it(u, piper), u.room, u.snr_db, seed=args.seed * 7919 + i)
        peak = peak_score(detector, audio, seed=args.seed * 7919 + i)
        peaks.append(peak)
        who = ["piper"] if u.voice == "piper" else \
            [f"espeak {u.wpm} wpm", f"espeak +{u.voice.partition('+')[2] or 'plain'}"]
        for g in (*who, condition(u), "alone" if u.text == word else "before a request"):
            groups.setdefault(g, []).append(peak)
    cutoff = detector.cutoff
    print(f"{word!r}: {len(utterances)} utterances from {len(langs)} espeak-ng English voices (8 variants, "
          f"3 rates) and Piper ({len(PIPER_RATES)} rates); cut-off {cutoff} as shipped")
    for g in sorted(groups):
        print(f"  {g:<18}({len(groups[g]):>3}) {100 * np.mean(np.array(groups[g]) > cutoff):.1f}% detected")

    t0 = time.perf_counter()
    negatives, path, cached = negative_hour(word, langs, args.seed, args.hours * 3600, piper, folder)
    made = time.perf_counter() - t0
    detector.restart()
    t0 = time.perf_counter()
    negatives = with_floor(negatives, args.seed)
    scores = np.concatenate([detector.scores(negatives[i:i + RATE]) for i in range(0, len(negatives), RATE)])
    compute = time.perf_counter() - t0
    hours = len(negatives) / RATE / 3600
    print(f"speech without the wake word: {hours:.2f} h in {path} ({'cached' if cached else f'made in {made:.0f} s'}); "
          f"detector compute {compute:.1f} s, real-time factor {compute / (hours * 3600):.4f}")
    print("  cut-off  detected  false wakes/hour")
    for c in sorted({*CUTOFFS, cutoff}):
        wakes = count_wakes(scores, c, detector.step_s)
        print(f"  {c:<7}  {100 * np.mean(np.array(peaks) > c):6.1f}%  {wakes / hours:8.2f}"
              f"{'  (shipped)' if c == cutoff else ''}")
    print(f"wake {100 * np.mean(np.array(peaks) > cutoff):.1f}% detected, "
          f"{count_wakes(scores, cutoff, detector.step_s) / hours:.2f} false wakes/hour")
    return 0
