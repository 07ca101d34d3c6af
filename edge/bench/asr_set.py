"""The spoken recognition set: what a home assistant hears, generated from templates by a seed, in many voices.

Sentences come from templates filled with numbers, times, names, places and
household things; a held-out part is drawn from the same templates with a
different seed, so nothing is tuned on one fixed list. Each utterance gets a
voice (an espeak-ng English voice with a variant, at one of three rates, or
the Piper voice) and a room condition (clean, room reverberation, background
noise at a stated signal-to-noise ratio, or both), all chosen by the seed.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from edge.capture.room import RoomSettings, impulse_response

PEOPLE = ["Tom", "Anna", "Priya", "Carlos", "Emma", "David", "Sarah", "James", "Maria", "Peter", "Lucy", "Mohammed",
          "Grace", "Oliver", "Sophie", "Daniel", "Hannah", "Kevin", "Laura", "Michael"]
PLACES = ["Paris", "London", "Tokyo", "Berlin", "Chicago", "Madrid", "Boston", "Sydney", "Toronto", "Dublin",
          "Seattle", "Rome", "Denver", "Lisbon", "Vienna"]
ROOMS = ["kitchen", "living room", "bedroom", "bathroom", "hallway", "office", "garage", "dining room"]
DEVICES = ["light", "lights", "lamp", "heater", "fan", "radio", "television"]
THINGS = ["milk", "eggs", "bread", "coffee", "apples", "butter", "rice", "tomatoes", "cheese", "batteries"]
UNITS_WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
TENS_WORDS = "twenty thirty forty fifty".split()
REPLIES = ["Yes.", "No.", "Yes please.", "No thanks.", "Mm-hm.", "Okay.", "Sure.", "Thank you.", "Stop.",
           "That's right.", "Never mind.", "Go on.", "Not now.", "Maybe later.", "Uh-huh."]
MONTHS = "January February March April May June July August September October November December".split()
ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth twelfth fifteenth twentieth".split()

TEMPLATES = [
    "What is {n} plus {n}?", "What is {n} times {n}?", "What is {big} minus {n}?",
    "Set a timer for {mins} minutes.", "Wake me up at {time}.", "Remind me to call {person} at {time}.",
    "Turn off the {room} {device}.", "Turn on the {room} {device}.", "Dim the {room} lights to {pct} percent.",
    "Set the thermostat to {temp} degrees.", "What's the weather in {place} tomorrow?",
    "What time is it in {place}?", "How far is {place} from {place}?", "Call {person}.",
    "Send a message to {person} saying I'll be late.", "Hey {person}, could you close the window please?",
    "Add {thing} to the shopping list.", "Add {n} {thing} to my list.", "Play some music in the {room}.",
    "Is {person} coming to dinner on {month} the {ord}?", "My flight to {place} leaves at {time}.",
    "How many days until {month} {ord}?", "Convert {big} grams to ounces.", "Tell {person} dinner is ready.",
    "What did I just say?", "Lock the front door.", "Stop the music.", "Turn the volume down to {n}.",
    "{reply}", "{reply}", "{reply}",
]


@dataclass(frozen=True)
class Utterance:
    text: str
    names: frozenset[str]  # lower-cased proper names in the text (people and places)
    voice: str  # espeak-ng voice (with +variant) or "piper"
    wpm: int  # espeak rate; 0 for piper
    room: bool  # reverberation of a small room
    snr_db: float | None  # background noise, None for none
    held_out: bool


def _fill(template: str, rng: random.Random) -> tuple[str, set[str]]:
    names: set[str] = set()

    def pick(kind: str) -> str:
        if kind == "n":
            return rng.choice(UNITS_WORDS)
        if kind == "big":
            return f"{rng.choice(TENS_WORDS)} {rng.choice(UNITS_WORDS[:9])}" if rng.random() < 0.7 else \
                f"{rng.choice(UNITS_WORDS[:9])} hundred"
        if kind == "mins":
            return rng.choice(UNITS_WORDS + ["fifteen", "twenty", "twenty five", "forty five"])
        if kind == "time":
            hour = rng.choice(UNITS_WORDS)
            return rng.choice([f"{hour} o'clock", f"{hour} thirty", f"{hour} fifteen", f"{hour} forty five"]) + \
                rng.choice(["", " in the morning", " p.m.", " a.m."])
        if kind == "pct":
            return rng.choice(TENS_WORDS + ["ten", "seventy", "eighty"])
        if kind == "temp":
            return rng.choice(["sixty eight", "seventy", "seventy two", "twenty one", "nineteen", "twenty two"])
        if kind in ("person", "place"):
            name = rng.choice(PEOPLE if kind == "person" else PLACES)
            names.add(name.lower())
            return name
        table = {"room": ROOMS, "device": DEVICES, "thing": THINGS, "month": MONTHS, "ord": ORDINAL_WORDS,
                 "reply": REPLIES}
        return rng.choice(table[kind])

    out, rest = "", template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        kind, _, rest = tail.partition("}")
        out += head + pick(kind)
    return out + rest, names


def voices(espeak_langs: list[str]) -> list[tuple[str, int]]:
    """Every English espeak-ng voice with a spread of variants, each at three rates, and Piper."""
    variants = ["", "+f3", "+m3", "+f1", "+m7", "+f4", "+m1", "+klatt"]
    out = [(lang + var, wpm) for lang in espeak_langs for var in variants for wpm in (140, 170, 200)]
    return out + [("piper", 0)] * max(1, len(out) // 8)  # Piper is the voice users hear back: give it weight


CONDITIONS: list[tuple[bool, float | None]] = [(False, None), (True, None), (False, 20.0), (True, 10.0)]


def generate(n: int, seed: int, espeak_langs: list[str], held_out_share: float = 0.25) -> list[Utterance]:
    """`n` utterances: the first part drawn with `seed`, the held-out part with a different seed."""
    n_held = max(1, round(n * held_out_share)) if n > 1 else 0
    pool = voices(espeak_langs)
    out = []
    for part, count, s in ((False, n - n_held, seed), (True, n_held, seed + 7919)):
        rng = random.Random(s)
        order = rng.sample(pool, len(pool))
        for i in range(count):
            text, names = _fill(rng.choice(TEMPLATES), rng)
            voice, wpm = order[i % len(order)]
            room, snr = CONDITIONS[i % len(CONDITIONS)]
            out.append(Utterance(text, frozenset(names), voice, wpm, room, snr, part))
    return out


def in_room(audio: np.ndarray, room: bool, snr_db: float | None, seed: int) -> np.ndarray:
    """The utterance as a microphone across a room hears it: reverberation, then noise at `snr_db`."""
    x = np.asarray(audio, np.float64)
    if room:  # the speaker's own voice, direct path plus a 400 ms reverberant tail
        ir = impulse_response(RoomSettings(gain_db=0.0, rt60_ms=400.0, tail_ms=300.0, seed=seed))
        x = np.convolve(x, ir)[:len(x) + len(ir) // 2]
    if snr_db is not None:  # pink-ish household noise (fan, traffic): white noise with a 1/f tilt
        rng = np.random.default_rng(seed)
        spec = np.fft.rfft(rng.standard_normal(len(x)))
        spec /= np.sqrt(np.maximum(1.0, np.arange(len(spec))))
        noise = np.fft.irfft(spec, len(x))
        power = np.mean(x ** 2) + 1e-12
        x = x + noise * np.sqrt(power / (np.mean(noise ** 2) + 1e-12) / 10 ** (snr_db / 10))
    peak = np.max(np.abs(x)) if len(x) else 0.0
    return (x / peak * 0.8 if peak > 0.8 else x).astype(np.float32)
