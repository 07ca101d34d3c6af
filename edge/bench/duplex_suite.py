"""The duplex behaviour suite: spoken cases generated here, in the style of Full-Duplex-Bench v1.5.

Each case: silence, a request that calls for a long answer, then, a fixed
time after the request ends (while the assistant is answering), one overlap
event of a category:

- interruption - the user takes the floor with a new request;
- backchannel  - "mm-hmm", "yeah", ...;
- other        - the user talks to someone else in the room;
- background   - another voice well below the user's level (a TV, a far talker).

The first voices use the user's own voice for "other" and a quieter second
voice for "background". The voices after them (ROOM_VOICES) put a second
person in the room: "other" is that person calling someone by name, in
their own voice and at the user's level, "background" is a television at
the user's level in a third voice, and the user's own interruptions come in
voices the first cases do not use. In every case the user has spoken to the
assistant first (the request), as in a real session, so the user's voice is
known when the overlap comes.

After the suite come households (HOUSEHOLDS, picked with `--skip-voices`):
the user talking to someone else in the user's own voice, a second person
calling someone, and a television 6 dB louder than the user, with names,
voices and sentences the suite does not have. They come in two parts, a
development part and a held-out part that is run only to report.

Speech is made with espeak-ng (several voices and rates) and the Piper
voice; every voice says different words, so no one phrase decides a rate.
The user's speech is set to one level; the input WAV, the user-only track
and the event's scheduled window are written for scoring.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from edge.audio_format import RATE
from kernels.resample import resample

CATEGORIES = ("interruption", "backchannel", "other", "background")
USER_DBFS = -24.0  # RMS of the user's speech
BACKGROUND_DB = -20.0  # background speech relative to the user
LEAD_S, EVENT_AFTER_S, TAIL_S = 0.5, 5.0, 7.0

# Requests the embedded default answers itself, at length, whichever recognizer hears them (a question
# that needs outside knowledge, or a story, is delegated with a short "let me check", and a request its
# voice makes unreadable gets a short answer: either way nothing would be playing when the event comes).
REQUESTS = (
    "Please explain in detail how the human heart pumps blood around the body.",
    "Can you explain how a bicycle works?",
    "Please explain in detail how the lungs work.",
    "Can you explain how an airplane flies?",
)
EVENTS = {
    "interruption": ("Wait, stop. Can you tell me a good recipe for pancakes instead?",
                     "Sorry to cut in, but how many legs does a spider have?",
                     "Hold on, actually, what is the capital of Australia?",
                     "No, no, that is enough. Tell me a joke about cats instead."),
    "backchannel": ("Mm-hmm.", "Yeah.", "Uh-huh.", "Right."),
    "other": ("Hey Mark, could you close the window, please?",
              "Sarah, dinner is almost ready, can you set the table?",
              "Honey, have you seen my car keys anywhere?",
              "Mom, I will call you back in five minutes, okay?"),
    "background": ("And in other news tonight, the city council approved the new budget after a long debate.",
                   "The weather tomorrow will be cloudy, with a chance of rain in the afternoon.",
                   "Our next caller is on the line from Denver. Go ahead, you are on the air.",
                   "Traffic is heavy on the northbound bridge this evening, so plan for delays."),
}


@dataclass(frozen=True)
class Voice:
    engine: str  # "espeak" or "piper"
    name: str  # espeak voice, or "" for the Piper voice
    rate: float  # espeak words per minute, or the Piper length scale

    @property
    def label(self) -> str:
        return f"{self.engine}-{self.name or 'joe'}-{self.rate:g}"


VOICES = (Voice("piper", "", 1.0), Voice("espeak", "en-us", 170), Voice("espeak", "en-gb", 145),
          Voice("espeak", "en-us+f2", 190))
BACKGROUND_VOICES = (Voice("espeak", "en-us+m3", 160), Voice("piper", "", 0.9))


@dataclass(frozen=True)
class Room:
    """A user and the other people heard in the room: someone else who talks, and a television."""

    user: Voice
    other: Voice
    tv: Voice


# Voices the threshold of the voice cue was not measured on (edge/bench/speaker.py uses others), and texts
# the first cases do not have: names the recognizer must read, a television as loud as the user.
# Voices the encoder tells apart from the user's (measured with a one-request profile and 0.8 s of speech:
# similarity 0.42-0.54, where the same voice scores 0.71-0.80). espeak-ng's numbered variants of one voice
# sound alike to it (0.55-0.80 between them), and "en-gb" ignores variants, so those make no second person.
ROOM_VOICES = (Room(Voice("espeak", "en-us+f5", 155), Voice("espeak", "en-us+Michael", 165),
                    Voice("espeak", "en-us+Andy", 170)),
               Room(Voice("espeak", "en-us+Annie", 150), Voice("espeak", "en-us+klatt4", 165),
                    Voice("piper", "", 1.1)),
               Room(Voice("espeak", "en-us+grandma", 150), Voice("espeak", "en-us+klatt", 160),
                    Voice("espeak", "en-gb-x-gbcwmd+m5", 170)))
ROOM_CATEGORIES = ("interruption", "other", "background")
ROOM_BACKGROUND_DB = 0.0  # the television as loud as the user
ROOM_EVENTS = {
    "interruption": ("Sorry, stop there. How far away is the moon?",
                     "Hang on, can you tell me how rainbows form instead?",
                     "Excuse me, what is a good name for a goldfish?"),
    "other": ("Hey Tom, could you close the window please?",
              "Lucy, your phone is ringing in the kitchen.",
              "Hey Peter, did you remember to feed the dog this morning?"),
    "background": ("And in other news today, the markets closed slightly higher.",
                   "Coming up after the break, a look at the finest gardens in the county.",
                   "Scientists say the new telescope has found water on a distant planet."),
}


@dataclass(frozen=True)
class Household:
    """A user who also talks to someone else in the room, a second person who calls someone, and a
    television louder than the user: names, voices and sentences the voices before do not have."""

    user: Voice
    other: Voice
    tv: Voice
    user_aside: str  # the user, in the user's own voice, talking to someone else
    other_call: str  # the second person calling someone
    tv_text: str


# Two parts, written before the policy was changed for them: a development part, then a held-out part
# that is run only to report (`--skip-voices` picks them, see HOUSEHOLD_PARTS).
HOUSEHOLDS = (
    Household(Voice("espeak", "en-us+Alicia", 160), Voice("espeak", "en-us+Gene", 160),
              Voice("espeak", "en-us+linda", 165), "Hey Olivia, can you bring me a glass of water?",
              "Daniel, your taxi is waiting outside.",
              "Tonight on the channel, a special report on the rising price of coffee."),
    Household(Voice("espeak", "en-us+belinda", 150), Voice("piper", "", 0.95), Voice("espeak", "en-us+edward", 165),
              "Dad, the plumber is coming at noon tomorrow.", "Hi Emma, do you want some tea?",
              "The home team scored twice in the final minutes to win the match."),
    Household(Voice("espeak", "en-us+steph", 155), Voice("espeak", "en-us+david", 165),
              Voice("espeak", "en-us+travis", 160), "Hey Jack, turn the music down a little, would you?",
              "Kevin, come and look at this, quickly.",
              "In sports tonight, the league announced a new season schedule."),
    Household(Voice("espeak", "en-us+aunty", 150), Voice("espeak", "en-us+boris", 160), Voice("piper", "", 1.05),
              "Grace, can you pass me the salt, please?", "Hey Nina, where did you put the scissors?",
              "Stay tuned for the late movie, right after these messages."),
)
# Short vocalisations and quiet voices, a held-out part (voices 12-14): a user's hummed "mm-hm" in a voice
# the recognizer misreads as words, a news voice 12 dB under the user, and the user's own new question.
@dataclass(frozen=True)
class Murmur:
    user: Voice
    tv: Voice
    hum: str
    interruption: str
    tv_text: str


MURMURS = (
    Murmur(Voice("espeak", "en-us+m3", 160), Voice("espeak", "en-us+Storm", 165), "Mm-hm.",
           "Sorry, what is the tallest mountain in Africa?", "In the news this hour, flooding closed two roads."),
    Murmur(Voice("espeak", "en-us+norbert", 155), Voice("espeak", "en-gb-x-rp+f3", 170), "Mm-hmm.",
           "Wait, how many moons does Mars have?", "Markets were mixed today as investors waited for news."),
    Murmur(Voice("espeak", "en-us+shelby", 160), Voice("piper", "", 1.0), "Mm-hm.",
           "Hold on, what do bees make honey from?", "The minister will speak to reporters tomorrow morning."),
)
MURMUR_TV_DB = -12.0
HOUSEHOLD_TV_DB = 6.0  # the television louder than the user
HOUSEHOLD_CASES = (("other", "user"), ("other", "second"), ("background", "tv"))


@dataclass
class Case:
    name: str
    category: str
    voice: str
    request: str
    event: str
    wav: str  # the microphone input
    user_wav: str  # the user's speech alone (for background: the request only)
    event_start_s: float  # scheduled window of the overlap event in the input
    event_end_s: float
    duration_s: float
    room: bool = False  # a second person and a television in the room (ROOM_VOICES)


class Synth:
    """Text to 16 kHz speech with a given voice; the Piper voice is loaded once, when first needed."""

    def __init__(self) -> None:
        self._piper = None

    def say(self, text: str, voice: Voice) -> np.ndarray:
        if voice.engine == "piper":
            if self._piper is None:
                from edge.speech.piper.voice import PiperVoice

                self._piper = PiperVoice(threads=1)
            self._piper.scales[1] = voice.rate
            parts = list(self._piper.synthesize(text))
            audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
            return resample(audio, self._piper.sample_rate, RATE)
        with tempfile.NamedTemporaryFile(suffix=".wav") as f:
            try:
                subprocess.run(["espeak-ng", "-v", voice.name, "-s", str(int(voice.rate)), "-w", f.name, text],
                               check=True, capture_output=True)
            except FileNotFoundError:
                raise RuntimeError("the duplex suite needs espeak-ng; install it with "
                                   "`apt-get install espeak-ng`") from None
            audio, rate = sf.read(f.name, dtype="float32")
        return resample(audio, rate, RATE)


def trim(x: np.ndarray, floor_db: float = -50.0) -> np.ndarray:
    """Cut leading and trailing silence, so scheduled times are speech times."""
    loud = np.flatnonzero(np.abs(x) > 10 ** (floor_db / 20))
    return x[loud[0]:loud[-1] + 1] if len(loud) else x


def set_level(x: np.ndarray, dbfs: float) -> np.ndarray:
    frames = x[:len(x) // 512 * 512].reshape(-1, 512)
    e = np.mean(frames ** 2, axis=1)
    voiced = e[e > 0.1 * e.max()] if len(e) else np.array([1e-6])
    return (x * 10 ** (dbfs / 20) / np.sqrt(np.mean(voiced) + 1e-12)).astype(np.float32)


SUITE_VOICES = len(VOICES) + len(ROOM_VOICES)  # the suite the bench runs unless told otherwise
HOUSEHOLD_END = SUITE_VOICES + len(HOUSEHOLDS)
MAX_VOICES = HOUSEHOLD_END + len(MURMURS)
HOUSEHOLD_PARTS = {"development": (SUITE_VOICES, SUITE_VOICES + 2), "held-out": (SUITE_VOICES + 2, HOUSEHOLD_END),
                   "murmurs": (HOUSEHOLD_END, MAX_VOICES)}


def build_suite(out_dir: Path, voices: int = SUITE_VOICES, synth: Synth | None = None, skip: int = 0) -> list[Case]:
    """Write the cases of voices [skip, voices) under `out_dir`; return them (also saved as cases.json)."""
    if not 1 <= voices <= MAX_VOICES or not 0 <= skip < voices:
        raise ValueError(f"the suite has 1 to {MAX_VOICES} voices, not {voices}, and fewer to leave out than "
                         f"to run, not {skip}")
    out_dir.mkdir(parents=True, exist_ok=True)
    synth = synth or Synth()
    cases = []
    casts: list[tuple[Voice, Room | Household | Murmur | None]] = [(v, None) for v in VOICES] + [
        (r.user, r) for r in ROOM_VOICES] + [(h.user, h) for h in HOUSEHOLDS] + [(u.user, u) for u in MURMURS]
    for vi, (voice, room) in enumerate(casts[:voices]):
        if vi < skip:
            continue
        if isinstance(room, Household):
            cases += _household(out_dir, synth, vi, room)
            continue
        if isinstance(room, Murmur):
            cases += _murmur(out_dir, synth, vi, room)
            continue
        request = set_level(trim(synth.say(REQUESTS[vi % len(REQUESTS)], voice)), USER_DBFS)
        req_start = int(LEAD_S * RATE)
        event_at = req_start + len(request) + int(EVENT_AFTER_S * RATE)
        for ci, cat in enumerate(CATEGORIES if room is None else ROOM_CATEGORIES):
            if room is not None:
                ri = vi - len(VOICES)
                text = ROOM_EVENTS[cat][ri % len(ROOM_EVENTS[cat])]
                speaker, db = {"other": (room.other, 0.0), "background": (room.tv, ROOM_BACKGROUND_DB)}.get(
                    cat, (voice, 0.0))
                event = set_level(trim(synth.say(text, speaker)), USER_DBFS + db)
            elif cat == "background":
                text = EVENTS[cat][(vi + ci) % len(EVENTS[cat])]
                bg_voice = BACKGROUND_VOICES[0] if voice.engine == "piper" else BACKGROUND_VOICES[1]
                event = set_level(trim(synth.say(text, bg_voice)), USER_DBFS + BACKGROUND_DB)
            else:
                text = EVENTS[cat][(vi + ci) % len(EVENTS[cat])]
                event = set_level(trim(synth.say(text, voice)), USER_DBFS)
            cases.append(_write_case(out_dir, f"{voice.label}-{cat}", cat, voice.label, REQUESTS[vi % len(REQUESTS)],
                                     request, req_start, text, event, event_at, room is not None))
    (out_dir / "cases.json").write_text(json.dumps([asdict(c) for c in cases], indent=1))
    return cases


def _household(out_dir: Path, synth: Synth, vi: int, h: Household) -> list[Case]:
    said = {"user": (h.user_aside, h.user, 0.0), "second": (h.other_call, h.other, 0.0),
            "tv": (h.tv_text, h.tv, HOUSEHOLD_TV_DB)}
    return _over_a_request(out_dir, synth, vi, h.user, [(f"{cat}-{who}", cat, *said[who])
                                                         for cat, who in HOUSEHOLD_CASES])


def _murmur(out_dir: Path, synth: Synth, vi: int, u: Murmur) -> list[Case]:
    return _over_a_request(out_dir, synth, vi, u.user, [
        (f"murmur-{cat}", cat, text, speaker, db) for cat, text, speaker, db in (
            ("interruption", u.interruption, u.user, 0.0), ("backchannel", u.hum, u.user, 0.0),
            ("background", u.tv_text, u.tv, MURMUR_TV_DB))])


def _over_a_request(out_dir: Path, synth: Synth, vi: int, user: Voice,
                    events: list[tuple[str, str, str, Voice, float]]) -> list[Case]:
    """The user's request, then each event (name, category, words, voice, level against the user) over the reply,
    in a room."""
    request_text = REQUESTS[vi % len(REQUESTS)]
    request = set_level(trim(synth.say(request_text, user)), USER_DBFS)
    req_start = int(LEAD_S * RATE)
    event_at = req_start + len(request) + int(EVENT_AFTER_S * RATE)
    cases = []
    for name, cat, text, speaker, db in events:
        event = set_level(trim(synth.say(text, speaker)), USER_DBFS + db)
        cases.append(_write_case(out_dir, f"{user.label}-{name}", cat, user.label, request_text, request,
                                 req_start, text, event, event_at, True))
    return cases


def _write_case(out_dir: Path, name: str, cat: str, voice: str, request_text: str, request: np.ndarray,
                req_start: int, text: str, event: np.ndarray, event_at: int, room: bool) -> Case:
    """The microphone track (request, then the event) and the user's own track (background left out)."""
    total = event_at + len(event) + int(TAIL_S * RATE)
    mic, user = np.zeros(total, np.float32), np.zeros(total, np.float32)
    mic[req_start:req_start + len(request)] = request
    user[req_start:req_start + len(request)] = request
    mic[event_at:event_at + len(event)] += event
    if cat != "background":
        user[event_at:event_at + len(event)] += event
    wav, user_wav = out_dir / f"{name}.wav", out_dir / f"{name}.user.wav"
    sf.write(str(wav), mic, RATE, subtype="PCM_16")
    sf.write(str(user_wav), user, RATE, subtype="PCM_16")
    return Case(name, cat, voice, request_text, text, str(wav), str(user_wav), event_at / RATE,
                (event_at + len(event)) / RATE, total / RATE, room)
