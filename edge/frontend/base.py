"""The frontend interface: one call per chunk, `step(chunk) -> ChunkOutput`.

Every frontend (scripted, null, the embedded default, a Venus bundle) sits
behind this interface; the frontend node owns the chunk loop around it.
What a frontend must do when the user talks over its reply is part of the
interface too (see `Frontend`); what that speech means is decided in
edge/bargein.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

import numpy as np

from edge.audio_format import RATE

Control = Literal["listen", "speak"]


@dataclass
class Overlap:
    """What the frontend knows of speech that started while the assistant was speaking."""

    text: str  # transcript so far
    audio: np.ndarray  # the overlapping speech so far, 16 kHz mono
    voiced_ms: float  # how much of it the VAD called speech
    ongoing: bool  # still being spoken at this boundary
    own_words: set[str] = field(default_factory=set)  # words of the reply recently spoken
    # How well the recognizer that wrote `text` scores other texts on the same audio (mean log-probability per
    # token, edge/detect/asr.py `likelihood`): a hum read as words is judged by it. None: not known.
    score: Callable[[list[str]], list[float]] | None = None


@dataclass
class Decision:
    decision: str  # interrupt, backchannel, other, background, echo, noise or pending (edge/bargein/policy.py)
    words: list[str]
    reason: str
    level_db: float | None = None
    user_level_db: float | None = None
    similarity: float | None = None  # to the user's enrolled voice, when it was weighed
    threshold: float | None = None  # ... and the similarity under which it is another voice
    reread: str | None = None  # the second reading of the words, when there was one
    reread_ms: float | None = None  # ... and what it cost

    @property
    def interrupts(self) -> bool:
        return self.decision == "interrupt"


# What speech over the reply means, asked at a chunk boundary (edge/bargein's judge supplies it).
OverlapJudge = Callable[[Overlap], Decision]


@dataclass
class Frame:
    """One video frame captured alongside a chunk."""

    t_ns: int  # capture time on the session clock
    image: np.ndarray  # HxWx3 uint8, RGB


@dataclass
class Chunk:
    """Chunk k covers [t_start_ns, t_end_ns) of 16 kHz mono audio."""

    index: int
    t_start_ns: int
    t_end_ns: int
    audio: np.ndarray  # float32 in [-1, 1], 16 kHz mono
    frames: list[Frame] = field(default_factory=list)
    sample_rate: int = RATE
    playback_active: bool = False  # the assistant's audio is playing during this chunk
    # When capture heard the user start talking over the assistant's playback, while that overlap is still
    # open (undecided, or still being spoken): a frontend can tell the user is talking over it.
    user_speech_onset_ns: int | None = None


@dataclass
class DelegateSpan:
    """A `<delegate>` span: a self-contained instruction for the harness."""

    instruction: str
    opened_ns: int  # evidence cutoff: what the model had heard when the span opened (session clock)
    closed_by: str = "</delegate>"  # or "<|turn_eos|>"


@dataclass
class SpeechStates:
    """The LLM hidden states of one chunk's spoken tokens, for a speech decoder conditioned on them."""

    token_ids: list[int]
    hidden: np.ndarray  # (len(token_ids), n_embd) float32


@dataclass
class ChunkOutput:
    """What the frontend decided for one chunk."""

    control: Control
    text: str = ""  # words to speak (delegate spans already removed)
    delegates: list[DelegateSpan] = field(default_factory=list)
    turn_end: bool = False  # `<|turn_eos|>` was emitted
    interrupt: bool = False  # yield to the user: stop playback, drop the rest of the reply
    # Stop what is still playing before these words (not a barge-in): a harness answer that is back while the
    # holding phrase ("One moment, I'll look that up.") still plays is spoken at this boundary in its place.
    cut_playback: bool = False
    user_text: str = ""  # what the frontend heard (transcript), when it knows
    backend_id: str = ""  # these words speak this harness result (delivery is confirmed by playback)
    tokens: list[int] = field(default_factory=list)  # raw token ids, when a model produced them
    info: dict = field(default_factory=dict)  # per-stage timings and decisions, for the journal
    speech: SpeechStates | None = None  # hidden states of the spoken tokens (the Venus voice uses them)
    ahead: str = ""  # words drafted for a later boundary: the voice may synthesize them before they are said


@dataclass
class Ahead:
    """A reply's first words drafted before the boundary that may say them (`Frontend.hear_ahead`)."""

    text: str  # the first words: the voice may make them ready now
    heard: str = ""  # what the user said, as the frontend heard it
    user_end_ns: int = -1  # where that speech ended (session clock; -1: not known)
    info: dict = field(default_factory=dict)  # what it cost, for the journal


@dataclass
class ResultToSay:
    """What the frontend node hands a frontend from the bus message `messages.BackendResult`: the words
    to prefill as `<backend>text</backend>` at an idle boundary, and the id its speech is tagged with."""

    id: str
    text: str
    work_id: str = ""  # the work item it answers: a later release of the same work replaces a waiting copy


class Frontend(ABC):
    """A frontend: decides, chunk by chunk, whether to listen or to speak and what.

    Barge-in. Capture hears speech over the reply, ducks playback and tells the
    frontend node; at the chunk boundary the judge in edge/bargein decides what
    the speech means. A frontend takes part in two ways, both declared here:

    - `hear_overlaps(judge)`, once before the first chunk: a frontend that
      transcribes the user itself hears speech over its own reply better than
      capture's levels alone. It keeps `judge`, asks it in its own step and
      yields there (returns True). Any other returns False; the judge then
      decides after each step from capture's activity and the chunk audio.
    - `yield_turn()`: the judge decided that the user took the floor after the
      frontend's step had gone on speaking. End the current turn now, so the
      next chunk may listen; drop the rest of the reply (the interrupt has
      already stopped its playback).

    Restarts. The frontend node checkpoints after every step; a frontend that
    holds conversation state (a model's context, a chat history, results not
    yet spoken) says what it needs in `checkpoint()`, and is handed it back in
    `resume()` when its process restarts, before the first chunk.
    """

    name: ClassVar[str]

    @abstractmethod
    def step(self, chunk: Chunk) -> ChunkOutput:
        """Decide this chunk: listen, or speak words (and any delegate spans)."""

    @abstractmethod
    def deliver(self, result: ResultToSay) -> None:
        """Queue a harness result; the frontend speaks it at its next idle listen boundary."""

    @abstractmethod
    def withdraw(self, result_id: str) -> bool:
        """Drop a delivered result it has not started to speak (the user asked something new since); whether
        it was still waiting."""

    @abstractmethod
    def hear_overlaps(self, judge: OverlapJudge) -> bool:
        """Whether this frontend judges speech over its own reply with `judge` in its step (see the class)."""

    @abstractmethod
    def yield_turn(self) -> None:
        """The user barged in: end the turn now so the next chunk may listen (see the class)."""

    def hear_ahead(self, so_far: Chunk) -> Ahead | None:
        """Live, the chunk being cut, from its start up to `so_far.t_end_ns`, before its boundary (called again
        as it grows; `step` follows with the whole chunk). A frontend that hears the user stop here may start
        the turn's work now, so that the boundary finds the reply ready; what it decides at the boundary must
        be what it would have decided without this. It returns the first words when it has drafted them (the
        voice makes them ready; so are a reply's next words, decoded while the reply plays), else None. By
        default it waits for the boundary."""
        return None

    def result_ahead(self, result: ResultToSay) -> str:
        """Live, a result just delivered: the words the next boundary will say it in, when that is already known
        (it is the next to be said and nothing stands before it). The voice makes them ready meanwhile, so they
        play as soon as that boundary speaks them; they are said only if it does. By default: nothing known."""
        return ""

    def type_text(self, text: str) -> bool:
        """Text the user typed during the session; True when the frontend takes it (its model reads it in the
        next chunk). By default refused: only a bundle's chunk loop has a place for typed text."""
        return False

    def see(self, t_ns: int, description: str) -> None:
        """The newest scene description from the vision node (frame time `t_ns`, e.g. "text: EXIT"); a frontend
        that cannot see frames itself puts it in its context. By default ignored (a bundle sees the frames)."""

    def resume(self, folder: Path, state: dict[str, Any]) -> dict[str, Any]:
        """Called once before the first chunk. `folder` is private to this session and outlives the process:
        keep there what a checkpoint is too big to carry. `state` is the last `checkpoint()` of an earlier life
        of this frontend, or empty on a first start: rebuild from it, and say in a few plain values what was
        rebuilt (the journal records it). By default there is nothing to keep."""
        return {}

    def checkpoint(self) -> dict[str, Any]:
        """After every step: what a restarted frontend needs to go on with the conversation. Plain values
        (msgpack: numbers, text, bytes, lists, mappings); files it names must already be written. By default
        nothing."""
        return {}

    def close(self) -> None:
        """Release models and files; the frontend is not stepped again."""
