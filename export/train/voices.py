"""Spoken clips for synthetic sessions: espeak-ng voices at several rates and the Piper voice.

Every phrase a session can use is spoken once per voice setting and kept in
a bank (a .npz file in the cache, keyed by the phrases, the voices and the
espeak-ng version), so a retrain does not speak them again. Training voices
and held-out voices are disjoint: held-out sessions use other espeak-ng
voices, and rates and a Piper length scale that training never hears.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
from tqdm import tqdm

from export.errors import ExportError

RATE = 16000


@dataclass(frozen=True)
class Voice:
    engine: str  # "espeak" | "piper"
    name: str  # espeak-ng voice (with variant), or "joe" for Piper
    rate: float  # words per minute (espeak) or length scale (Piper: larger is slower)
    pitch: int = 50  # espeak-ng pitch (0-99); Piper: which take (VITS draws new noise every call)
    shift: int = 0  # espeak: > 0 says the phrase with some vowels moved to a neighbour (`shift_vowels`), drawn from it

    @property
    def label(self) -> str:
        return (f"{self.engine}:{self.name}@{self.rate:g}" + (f"~{self.pitch}" if self.pitch != 50 else "")
                + (f"#{self.shift}" if self.shift else ""))


def _espeak(names: tuple[str, ...], rates: tuple[int, ...]) -> tuple[Voice, ...]:
    """Every voice at every rate, the pitch turning through three levels, so no voice keeps one pitch."""
    return tuple(Voice("espeak", n, r, (30, 50, 70)[(i + j) % 3]) for i, n in enumerate(names)
                 for j, r in enumerate(rates))


# Five accents with several voice variants each; held-out sessions use three other accents.
TRAIN_VOICES = _espeak(("en-us", "en-us+f1", "en-us+m2", "en-us+klatt", "en-us+Andy", "en-gb", "en-gb+f2",
                        "en-gb+m4", "en-gb+Annie", "en-gb-x-rp", "en-gb-x-rp+m7", "en-gb-x-rp+f3", "en-gb-x-gbclan",
                        "en-gb-x-gbclan+f5", "en-gb-x-gbclan+m6", "en-029", "en-029+f1", "en-029+m1",
                        "en-029+klatt2"), (140, 180, 225)) + tuple(
    Voice("piper", "joe", r, take) for r in (0.8, 0.9, 1.1, 1.25) for take in (50, 51, 52))
# Accents differ most in their vowels: a speaker of an accent never heard says "see" nearer "say". These voices
# say each phrase with about a third of its vowels moved to a neighbouring one (a fresh draw per `shift`), so the
# encoder learns to lean on the consonants and the whole word shape, not on one accent's vowels. Each training
# espeak-ng voice (of `voices`) once per take, at one of the training rates and pitches; no held-out accent,
# variant or rate is used.
def shifted_voices(voices: tuple[Voice, ...], takes: int) -> tuple[Voice, ...]:
    names = sorted({v.name for v in voices if v.engine == "espeak"})
    return tuple(Voice("espeak", n, (140, 180, 225)[(i + t) % 3], (30, 50, 70)[(i + 2 * t) % 3], shift=t)
                 for t in range(1, takes + 1) for i, n in enumerate(names))


HELDOUT_VOICES = (Voice("espeak", "en-gb-scotland", 160), Voice("espeak", "en-us-nyc+f4", 200),
                  Voice("espeak", "en-gb-x-gbcwmd+m5", 210), Voice("piper", "joe", 1.0))


# espeak-ng's English vowel mnemonics, each with the neighbours an accent may say instead.
NEIGHBOURS = {"i:": ("I", "eI", "i@"), "I": ("i:", "E", "@"), "E": ("a", "eI", "I"), "a": ("E", "A:", "V"),
              "A:": ("a", "0", "V"), "0": ("O:", "V", "A:"), "O:": ("0", "oU", "U"), "U": ("u:", "V", "@"),
              "u:": ("U", "oU", "u@"), "V": ("0", "@", "a"), "@": ("V", "I", "3:"), "3:": ("@", "e@", "V"),
              "eI": ("E", "aI", "i:"), "aI": ("OI", "eI", "A:"), "oU": ("O:", "aU", "u:"), "aU": ("a", "oU", "A:"),
              "OI": ("aI", "O:", "oU"), "I@": ("i:", "e@", "I"), "e@": ("E", "eI", "3:"), "O@": ("O:", "oU", "0"),
              "U@": ("u:", "O:", "U"), "A@": ("A:", "a", "V")}
_VOWEL = re.compile("|".join(re.escape(v) for v in sorted(NEIGHBOURS, key=len, reverse=True)))


def shift_vowels(phonemes: str, rng: np.random.Generator, share: float = 0.35) -> str:
    """espeak-ng phoneme mnemonics with about `share` of the vowels replaced by a neighbour."""
    def swap(m: re.Match) -> str:
        return str(rng.choice(NEIGHBOURS[m.group(0)])) if rng.random() < share else m.group(0)
    return _VOWEL.sub(swap, phonemes)


def trim(audio: np.ndarray, floor: float = 3e-3) -> np.ndarray:
    """Cut leading and trailing silence: a clip's length is its speech, timing is the session's."""
    loud = np.flatnonzero(np.abs(audio) > floor)
    return audio[loud[0]:loud[-1] + 1] if len(loud) else audio


def normalise(audio: np.ndarray, rms: float = 0.1) -> np.ndarray:
    """Scale to a fixed RMS over the voiced 20 ms frames, so gains in a session are chosen, not inherited."""
    n = len(audio) // 320 * 320
    if n == 0:
        return audio.astype(np.float32)
    e = np.sqrt(np.mean(audio[:n].reshape(-1, 320) ** 2, axis=1))
    voiced = e[e > 0.2 * e.max()]
    return (audio * (rms / max(float(np.sqrt(np.mean(voiced ** 2))), 1e-6))).astype(np.float32)


class Speaker:
    """Text to 16 kHz float32 speech for one Voice; the Piper voice is loaded on first use."""

    def __init__(self) -> None:
        self._piper = None

    def say(self, text: str, voice: Voice) -> np.ndarray:
        audio = self._say_piper(text, voice.rate) if voice.engine == "piper" else self._say_espeak(text, voice)
        return normalise(trim(audio))

    @staticmethod
    def _say_espeak(text: str, voice: Voice) -> np.ndarray:
        from kernels.resample import resample

        args = ["espeak-ng", "-v", voice.name, "-s", str(int(voice.rate)), "-p", str(voice.pitch)]
        try:
            if voice.shift:  # the phrase's phonemes in this voice, some vowels moved, spoken from the phonemes
                said = subprocess.run(args + ["-q", "-x", "--", text], check=True, capture_output=True, text=True,
                                      timeout=60).stdout
                rng = np.random.default_rng([voice.shift, zlib.crc32(f"{voice.name} {text}".encode())])
                text = "[[" + " _ ".join(shift_vowels(line.strip(), rng) for line in said.splitlines()
                                         if line.strip()) + "]]"
            wav = subprocess.run(args + ["--stdout", "--", text], check=True, capture_output=True, timeout=60).stdout
        except FileNotFoundError:
            raise ExportError("Training speech needs espeak-ng; install it with `apt-get install espeak-ng`.") from None
        except subprocess.CalledProcessError:
            raise ExportError(f"espeak-ng has no voice {voice.name!r}; list them with `espeak-ng --voices=en`.") \
                from None
        audio, rate = sf.read(io.BytesIO(wav), dtype="float32")
        return resample(audio, rate, RATE)

    def _say_piper(self, text: str, length_scale: float) -> np.ndarray:
        from kernels.resample import resample

        if self._piper is None:
            from edge.speech.piper.voice import PiperVoice

            self._piper = PiperVoice(threads=1, seed=0)
        self._piper.scales[1] = length_scale
        parts = list(self._piper.synthesize(text))
        audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
        return resample(audio, self._piper.sample_rate, RATE)


def espeak_version() -> str:
    try:
        out = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, timeout=30).stdout
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return "none"
    return out.strip()


class ClipBank:
    """(phrase, voice label) -> clip, spoken once and kept on disk."""

    def __init__(self, clips: dict[tuple[str, str], np.ndarray]) -> None:
        self.clips = clips

    def get(self, text: str, voice: Voice) -> np.ndarray:
        return self.clips[(text, voice.label)]

    @staticmethod
    def key(phrases: list[str], voices: tuple[Voice, ...]) -> str:
        blob = json.dumps([sorted(set(phrases)), [v.label for v in voices], espeak_version()])
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @classmethod
    def load_or_make(cls, phrases: list[str], voices: tuple[Voice, ...], cache_dir: Path,
                     progress: bool = True) -> "ClipBank":
        path = cache_dir / f"clips-{cls.key(phrases, voices)}.npz"
        if path.is_file():
            try:
                with np.load(path) as z:
                    index = json.loads(str(z["index"]))
                    return cls({(t, v): z[f"c{i}"] for i, (t, v) in enumerate(index)})
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                path.unlink(missing_ok=True)  # a damaged bank is spoken again
        speaker = Speaker()
        jobs = [(t, v) for v in voices for t in sorted(set(phrases))]
        clips = {}
        for t, v in tqdm(jobs, desc="speaking clips", unit="clip", disable=not progress, leave=False):
            clips[(t, v.label)] = speaker.say(t, v)
        cache_dir.mkdir(parents=True, exist_ok=True)
        index = list(clips)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, index=json.dumps(index), **{f"c{i}": clips[k] for i, k in enumerate(index)})
        tmp.replace(path)
        return cls(clips)
