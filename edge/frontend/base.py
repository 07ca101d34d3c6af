"""The frontend interface: one call per chunk, `step(chunk) -> ChunkOutput`.

Every frontend (scripted, null, the embedded default, a Venus bundle) sits
behind this interface; the frontend node owns the chunk loop around it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

Control = Literal["listen", "speak"]


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
    sample_rate: int = 16000
    playback_active: bool = False  # the assistant's audio is playing during this chunk
    user_speech_onset_ns: int | None = None  # first voiced sample while playback ran (barge-in)


@dataclass
class DelegateSpan:
    """A `<delegate>` span: a self-contained instruction for the harness."""

    instruction: str
    opened_ns: int  # evidence cutoff: when the span opened on the session clock
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
    user_text: str = ""  # what the frontend heard (transcript), when it knows
    backend_id: str = ""  # these words speak this harness result (delivery is confirmed by playback)
    tokens: list[int] = field(default_factory=list)  # raw token ids, when a model produced them
    info: dict = field(default_factory=dict)  # per-stage timings and decisions, for the journal
    speech: SpeechStates | None = None  # hidden states of the spoken tokens (the Venus voice uses them)


@dataclass
class BackendResult:
    """A harness result, to be prefilled as `<backend>text</backend>` at an idle boundary."""

    id: str
    text: str


class Frontend(Protocol):
    name: str

    def step(self, chunk: Chunk) -> ChunkOutput: ...

    def deliver(self, result: BackendResult) -> None:
        """Queue a harness result; the frontend speaks it at its next idle listen boundary."""

    def close(self) -> None: ...
