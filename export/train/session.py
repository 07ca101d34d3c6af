"""One synthetic full-duplex session: the microphone track, the camera frames, and what the model should do.

Time is cut into 1 s chunks as the runtime cuts it. The user asks questions
(sometimes with a short pause inside), acknowledges ("uh huh") over the
model's reply, or barges in with a new question; noise runs underneath. The
plan says, per chunk, what the model decides after hearing it:

- listen while the user speaks or nobody does;
- answer once a question has ended (at the first chunk that holds at least
  ENDPOINT_S of silence after it): the reply's words, WORDS_PER_CHUNK a chunk,
  `<|turn_eos|>` at the last; a delegate span plus a short holding line for
  questions that need outside knowledge; the result, once prefilled, in the
  next turn;
- keep talking through a backchannel;
- yield (end the turn without a word) on a barge-in: in the chunk where it
  started if at least YIELD_S of it falls in that chunk, else in the next.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from export.train import script
from export.train.frames import Scene, random_scene, render, scene_pool
from export.train.voices import RATE, ClipBank, Voice
from kernels.resample import resample

CHUNK_S = 1.0
ENDPOINT_S = 0.5  # silence after a question before the model answers; pauses inside a question are shorter
MAX_PAUSE_S = 0.3
YIELD_S = 0.75  # barge-in speech in a chunk that makes the model yield in that chunk; backchannels are shorter
MAX_BACKCHANNEL_S = 0.65
WORDS_PER_CHUNK = 4
PIPER_SHARE = 0.25
FRAME_SIZES = ((72, 96), (60, 80), (54, 96))  # (height, width) of training frames; held-out frames are 66 x 88
FRAME_SEEDS = 2  # noise patterns of a pooled session's frames (Mix.frame_pool)
HELDOUT_FRAME_SIZES = ((66, 88),)


@dataclass
class Event:
    """A user utterance on the session clock."""

    kind: str  # question | interrupt | backchannel | ack
    start_s: float
    end_s: float
    key: str = ""  # the question asked (question, interrupt)
    text: str = ""


@dataclass
class ChunkPlan:
    """What the model does after hearing chunk `index`."""

    index: int
    action: str = "listen"  # listen | speak | yield
    text: str = ""  # the words spoken in this chunk
    delegate: str = ""  # a delegate span's instruction, opened at the start of this chunk's words
    end_turn: bool = False
    inject: str = ""  # a harness result prefilled after this chunk's </unit>


@dataclass
class Turn:
    """A planned model turn, for scoring: which question or result it answers and where it runs."""

    kind: str  # reply | delegate | result
    key: str
    first: int
    last: int
    question: int = -1  # index into Session.events of the question answered
    interrupted_at: int = -1  # the yield chunk, when a barge-in cut the turn
    frame: tuple[str, str] | None = None  # (colour, shape) the answer names


@dataclass
class Session:
    variant: str
    audio: np.ndarray  # 16 kHz float32 microphone track, n_chunks seconds long
    scenes: list[Scene | None]  # the scene on camera per chunk (Omni), None for Audio
    events: list[Event]
    plan: list[ChunkPlan]
    turns: list[Turn] = field(default_factory=list)
    frame_size: tuple[int, int] = (72, 96)  # (height, width) of the camera frames
    frame_seed: int = 0
    voice: str = ""  # the user's voice (label)

    @property
    def n_chunks(self) -> int:
        return len(self.plan)

    def frame(self, k: int) -> np.ndarray | None:
        scene = self.scenes[k] if self.scenes else None
        return None if scene is None else render(scene, self.frame_size, self.frame_seed)

    def chunk_audio(self, k: int) -> np.ndarray:
        return self.audio[k * RATE:(k + 1) * RATE]


def colour(audio: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random microphone and room: a first-order spectral tilt, and half the time a short decaying echo tail."""
    from scipy.signal import fftconvolve, lfilter

    a = float(rng.uniform(-0.6, 0.9))  # > 0 brightens (pre-emphasis), < 0 darkens
    out = lfilter([1.0, -a], [1.0], audio) if a > 0 else lfilter([1.0 + a], [1.0, a], audio)
    if rng.random() < 0.5:
        n = int(rng.uniform(0.05, 0.3) * RATE)
        tail = rng.standard_normal(n) * np.exp(-np.arange(n) / (n / 5.0)) * float(rng.uniform(0.05, 0.3))
        tail[0] = 1.0
        out = fftconvolve(out, tail)[:len(audio)]
    rms = float(np.sqrt(np.mean(out ** 2))) or 1.0
    return (out * (float(np.sqrt(np.mean(audio ** 2))) / rms)).astype(np.float32)


def pause_inside(audio: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Insert a short silence at the quietest 50 ms of the clip's middle third."""
    hop = 800
    n = len(audio) // hop
    if n < 6:
        return audio
    e = np.sqrt(np.mean(audio[:n * hop].reshape(n, hop) ** 2, axis=1))
    lo, hi = n // 3, max(n // 3 + 1, 2 * n // 3)
    cut = (lo + int(np.argmin(e[lo:hi]))) * hop + hop // 2
    gap = np.zeros(int(rng.uniform(0.1, MAX_PAUSE_S) * RATE), np.float32)
    return np.concatenate([audio[:cut], gap, audio[cut:]])


def pieces(text: str, words: int = WORDS_PER_CHUNK) -> list[str]:
    """A reply cut into per-chunk pieces of whole words (the first piece has no leading space)."""
    w = text.split()
    return [" ".join(w[i:i + words]) for i in range(0, len(w), words)]


def response_chunk(end_s: float) -> int:
    """The first chunk after which at least ENDPOINT_S of silence follows a question that ended at end_s."""
    return max(0, math.ceil((end_s + ENDPOINT_S) / CHUNK_S - 1e-9) - 1)


def yield_chunk(onset_s: float) -> int:
    k = int(onset_s // CHUNK_S)
    return k if (k + 1) * CHUNK_S - onset_s >= YIELD_S else k + 1


def held_out_order(a: str, b: str, c: str) -> bool:
    """About one question triple in ten is never asked in that order in training; held-out sessions ask them.

    Triples, not pairs: every question follows every other in training, so the model cannot learn that some
    question never comes after another (a pair held out entirely teaches exactly that, and it then mishears
    the held-out order)."""
    return zlib.crc32(f"{a}>{b}>{c}".encode()) % 10 == 0


@dataclass
class Mix:
    """Chances of each event in a session."""

    pause: float = 0.3  # a short pause inside a question
    interrupt: float = 0.4  # a barge-in during a reply of 3+ chunks
    backchannel: float = 0.4  # an acknowledgement during a reply (when there is no barge-in)
    ack: float = 0.15  # an acknowledgement while the model is idle
    no_result: float = 0.1  # a delegation whose result never comes
    result_delay: tuple[int, int] = (1, 4)  # chunks from the delegate turn to the result's prefill, both ends in
    noise: float = 0.7
    speed: float = 0.1  # each clip played up to this much faster or slower (pitch moves with it)
    colour: bool = True  # each clip through a random tilt and, sometimes, a small room (see `colour`)
    frame_question: float = 0.4  # Omni: the share of frame questions
    outside: float = -1.0  # the share of outside-knowledge questions among the others; < 0: as many as there are
    # Omni: > 0 shows only scenes of a pool of this many (drawn from `pool_seed`), with one of FRAME_SEEDS noise
    # patterns, so the few distinct frames of a training run can be encoded once; 0 draws every scene afresh.
    frame_pool: int = 0
    pool_seed: int = 0


class Builder:
    """Lays out one session on the chunk clock; rng draws every choice."""

    def __init__(self, variant: str, bank: ClipBank, voices: tuple[Voice, ...], n_chunks: int,
                 rng: np.random.Generator, heldout: bool = False, mix: Mix | None = None) -> None:
        self.variant, self.bank, self.rng, self.n = variant, bank, rng, n_chunks
        piper = [v for v in voices if v.engine == "piper"]
        others = [v for v in voices if v.engine != "piper"] or piper
        pool = piper if piper and rng.random() < PIPER_SHARE else others  # the one natural voice, often
        self.voice = pool[int(rng.integers(len(pool)))]
        self.heldout = heldout
        self.mix = mix or Mix()
        self.audio = np.zeros(n_chunks * RATE, np.float32)
        self.gain = float(rng.uniform(0.5, 1.5))
        self.events: list[Event] = []
        self.plan = [ChunkPlan(k) for k in range(n_chunks)]
        self.turns: list[Turn] = []
        self.protect: list[tuple[int, int]] = []  # chunk ranges whose scene must not change (frame questions)
        self.scene_of: dict[int, tuple[str, str]] = {}  # turn index -> planned (colour, shape)
        self.pool = scene_pool(self.mix.pool_seed, self.mix.frame_pool) if self.mix.frame_pool else ()

    # --- audio -------------------------------------------------------------------------------------
    def clip(self, text: str) -> np.ndarray:
        audio = self.bank.get(text, self.voice) * self.gain
        if self.mix.speed:
            f = 1.0 + float(self.rng.uniform(-self.mix.speed, self.mix.speed))
            audio = resample(audio, int(round(RATE * f)), RATE)
        if self.mix.colour:
            audio = colour(audio, self.rng)
        return audio

    def place(self, audio: np.ndarray, start_s: float) -> float:
        i = int(round(start_s * RATE))
        j = min(len(self.audio), i + len(audio))
        self.audio[i:j] += audio[:j - i]
        return j / RATE

    def with_pause(self, audio: np.ndarray) -> np.ndarray:
        return pause_inside(audio, self.rng)

    # --- choices -----------------------------------------------------------------------------------
    def pick_question(self, before: str, prev: str) -> script.Question:
        qs = script.questions(self.variant)
        if self.variant == "omni":
            frame = self.rng.random() < self.mix.frame_question
            qs = tuple(q for q in qs if q.frame == frame)
        if self.mix.outside >= 0 and not qs[0].frame:
            outside = self.rng.random() < self.mix.outside
            qs = tuple(q for q in qs if bool(q.delegate) == outside)
        qs = tuple(q for q in qs if q.key != prev) or qs
        if before and prev:
            ok = [q for q in qs if held_out_order(before, prev, q.key) == self.heldout]
            qs = tuple(ok) or qs
        return qs[int(self.rng.integers(len(qs)))]

    # --- the session -------------------------------------------------------------------------------
    def build(self) -> Session:
        t = float(self.rng.uniform(0.2, 1.5))
        before, prev, interrupting = "", "", None  # interrupting: the turn a barge-in at t cuts
        while True:
            q = self.pick_question(before, prev)
            audio = self.clip(q.text)
            if self.rng.random() < self.mix.pause:
                audio = self.with_pause(audio)
            if interrupting is not None:
                opener = self.clip(script.INTERRUPT_OPENERS[int(self.rng.integers(len(script.INTERRUPT_OPENERS)))])
                audio = np.concatenate([opener, np.zeros(int(0.08 * RATE), np.float32), audio])
            end = t + len(audio) / RATE
            r = response_chunk(end)
            turn_len = 1 if q.delegate else len(pieces(script.reply_text(q, "x", "x")))
            if r + turn_len + 2 > self.n:
                if interrupting is not None:  # no room for the barge-in: the user acknowledges instead, maybe
                    self.backchannel_in(interrupting)
                break
            if interrupting is not None:
                self.cut(interrupting, t)
            self.place(audio, t)
            self.events.append(Event("interrupt" if interrupting is not None else "question", t, end, q.key, q.text))
            interrupting = None
            t, interrupting = self.answer(q, r, len(self.events) - 1)
            before, prev = prev, q.key
            if t >= self.n - 1:
                break
        if self.rng.random() < self.mix.noise:
            level = 10 ** (self.rng.uniform(-55, -35) / 20)
            self.audio += (self.rng.standard_normal(len(self.audio)) * level).astype(np.float32)
        np.clip(self.audio, -1.0, 1.0, out=self.audio)
        scenes = self.scenes() if self.variant == "omni" else []
        for turn in self.turns:  # a frame answer names the scene on camera when the model answers
            if turn.frame is not None and scenes:
                s = scenes[turn.first]
                turn.frame = (s.colour, s.shape)
                q = script.by_key(self.variant)[turn.key]
                texts = pieces(script.reply_text(q, s.colour, s.shape))
                for k, text in zip(range(turn.first, turn.last + 1), texts):
                    if self.plan[k].action == "speak":
                        self.plan[k].text = text
        return Session(self.variant, self.audio, scenes, self.events, self.plan, self.turns, voice=self.voice.label)

    def answer(self, q: script.Question, r: int, qi: int) -> tuple[float, Turn | None]:
        """Plan the model's answer from chunk r; returns when the user speaks next and the turn a barge-in cuts."""
        if q.delegate:
            self.plan[r] = ChunkPlan(r, "speak", q.reply, q.delegate, True)
            self.turns.append(Turn("delegate", q.key, r, r, qi))
            end = r
            if self.rng.random() >= self.mix.no_result and r + 3 < self.n:
                lo, hi = self.mix.result_delay
                inject_at = r + int(self.rng.integers(lo, hi + 1))
                result = script.RESULTS[q.key][int(self.rng.integers(len(script.RESULTS[q.key])))]
                texts = pieces(result)
                if inject_at + len(texts) + 1 < self.n:
                    self.plan[inject_at].inject = result
                    end = self.speak(texts, inject_at + 1)
                    self.turns.append(Turn("result", q.key, inject_at + 1, end, qi))
                    self.backchannel_in(self.turns[-1])
            return self.after(end), None
        texts = pieces(script.reply_text(q, "x", "x"))
        last = self.speak(texts, r)
        turn = Turn("reply", q.key, r, last, qi, frame=("", "") if q.frame else None)
        self.turns.append(turn)
        if q.frame:
            self.protect.append((int(self.events[qi].start_s), last))
        n = len(texts)
        if n >= 3 and self.rng.random() < self.mix.interrupt:
            j = int(self.rng.integers(1, n - 1))
            # In the reply's last chunk but one, early enough that the model yields there (not at the last chunk).
            latest = 0.9 if j < n - 2 else CHUNK_S - YIELD_S
            onset = r + j + float(self.rng.uniform(0.05, latest))
            if yield_chunk(onset) <= r + n - 2:
                return onset, turn
        self.backchannel_in(turn)
        return self.after(last), None

    def speak(self, texts: list[str], first: int) -> int:
        for i, text in enumerate(texts):
            self.plan[first + i] = ChunkPlan(first + i, "speak", text, end_turn=i == len(texts) - 1)
        return first + len(texts) - 1

    def cut(self, turn: Turn, onset: float) -> None:
        """A barge-in at `onset` ends `turn`: yield, then listen."""
        y = yield_chunk(onset)
        self.plan[y] = ChunkPlan(y, "yield", end_turn=True)
        for k in range(y + 1, turn.last + 1):
            self.plan[k] = ChunkPlan(k)
        turn.interrupted_at, turn.last = y, y

    def backchannel_in(self, turn: Turn) -> None:
        """Maybe an acknowledgement during a reply of two chunks or more, after its first chunk."""
        if turn.last > turn.first and self.rng.random() < self.mix.backchannel:
            self.backchannel(turn.first + int(self.rng.integers(1, turn.last - turn.first + 1)))

    def backchannel(self, k: int) -> None:
        texts = [b for b in script.BACKCHANNELS if len(self.bank.get(b, self.voice)) / RATE <= MAX_BACKCHANNEL_S]
        if not texts:
            return
        text = texts[int(self.rng.integers(len(texts)))]
        audio = self.clip(text)[:int(MAX_BACKCHANNEL_S * RATE)]
        start = k + float(self.rng.uniform(0.0, CHUNK_S - len(audio) / RATE))
        self.place(audio, start)
        self.events.append(Event("backchannel", start, start + len(audio) / RATE, text=text))

    def after(self, last: int) -> float:
        """When the user speaks next, after the model's turn ending at chunk `last`; maybe an idle "okay" first."""
        t = last + 1 + float(self.rng.uniform(0.2, 1.8))
        if self.rng.random() < self.mix.ack and t + 1 < self.n:
            text = script.BACKCHANNELS[int(self.rng.integers(len(script.BACKCHANNELS)))]
            end = self.place(self.clip(text), t)
            self.events.append(Event("ack", t, end, text=text))
            t = end + float(self.rng.uniform(1.0, 2.5))
        return t

    def scenes(self) -> list[Scene]:
        """The camera's scene per chunk: it changes every 3-7 chunks, never under a frame question."""
        out: list[Scene] = []
        scene, left = self.new_scene(None), int(self.rng.integers(3, 8))
        for k in range(self.n):
            guarded = any(a <= k <= b for a, b in self.protect)
            if left <= 0 and not guarded:
                scene, left = self.new_scene(scene), int(self.rng.integers(3, 8))
            out.append(scene)
            left -= 1
        return out

    def new_scene(self, avoid: Scene | None) -> Scene:
        """A scene of another colour than `avoid`: from the pool when there is one, else drawn afresh."""
        if not self.pool:
            return random_scene(self.rng, avoid=avoid)
        ok = [s for s in self.pool if avoid is None or s.colour != avoid.colour]
        return ok[int(self.rng.integers(len(ok)))]


def make_session(variant: str, bank: ClipBank, voices: tuple[Voice, ...], n_chunks: int, seed: int | list[int],
                 heldout: bool = False, mix: Mix | None = None, frame_size: tuple[int, int] | None = None) -> Session:
    rng = np.random.default_rng(seed)
    session = Builder(variant, bank, voices, n_chunks, rng, heldout, mix).build()
    if variant == "omni":
        sizes = HELDOUT_FRAME_SIZES if heldout else FRAME_SIZES
        session.frame_size = frame_size or sizes[int(rng.integers(len(sizes)))]
        pooled = mix is not None and mix.frame_pool > 0
        session.frame_seed = int(rng.integers(FRAME_SEEDS if pooled else 1 << 30))
    return session
