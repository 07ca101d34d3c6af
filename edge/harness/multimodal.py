"""The multimodal capability: answers from the frozen evidence (what was heard and seen before the cutoff).

With the embedded default it works from a transcript of the frozen audio and the
text read in the frozen frames (the vision node's describer, PP-OCRv4); either
part is pluggable (`module:factory`), and either may be left out.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from edge.harness.capability import CapabilityError, Outcome, RunContext, one_text
from edge.harness.chat import ChatBackend

Transcriber = Callable[[np.ndarray, int], str]
Describer = Callable[[list[np.ndarray]], str]

SYSTEM = ("You help a voice assistant answer from what it just heard and saw. Use only the evidence given. "
          "Answer in at most three short plain sentences.")


class MultimodalCapability:
    name = "multimodal"
    description = "Answers a question about what was just heard or seen (the recent audio and camera frames)."
    instructions = ("Use when the request is about the conversation's recent sound or picture. Put the question "
                    "in 'question'.")
    schema: dict[str, Any] = one_text("question", 4000)
    timeout_s = 60.0  # its default: the harness's `timeouts` setting may give another (HarnessSettings.timeout_for)

    def __init__(self, transcriber: Transcriber | None, chat: ChatBackend | None = None,
                 describer: Describer | None = None, timeout_s: float | None = None) -> None:
        if transcriber is None and describer is None:
            raise ValueError("the multimodal capability needs a transcriber, a frame describer or both")
        self.transcriber, self.chat, self.describer = transcriber, chat, describer
        if timeout_s is not None:
            self.timeout_s = timeout_s

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        ev = ctx.evidence()
        if ev is None or (len(ev.audio) == 0 and not ev.frames):
            raise CapabilityError("nothing was heard or seen before the question, so there is nothing to go on")
        transcript = self.transcriber(ev.audio, ev.sample_rate).strip() if self.transcriber and len(ev.audio) else ""
        scene = self.describer([img for _, img in ev.frames]).strip() if self.describer and ev.frames else ""
        if ctx.cancelled:
            raise CapabilityError("the task was cancelled")
        if self.chat is None:
            if not transcript and not scene:
                raise CapabilityError("I could not make out anything in the last few seconds")
            return Outcome(" ".join(p for p in (f"I heard: {transcript}" if transcript else "",
                                                 f"I saw: {scene}" if scene else "") if p))
        evidence = f"Transcript of the last {ev.seconds:.0f} seconds: {transcript or '(silence)'}"
        if scene:
            evidence += f"\nWhat the camera showed: {scene}"
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"{evidence}\n\nQuestion: {arguments['question']}"}]
        return Outcome(self.chat.complete(messages, self.timeout_s))


def load_factory(spec: str) -> Callable[..., Any]:
    """'package.module:callable' -> the callable; one clear sentence when it is not there."""
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ValueError(f"{spec!r} is not of the form 'package.module:callable'")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load {spec!r} ({exc})") from None


def embedded_transcriber(threads: int = 1) -> Transcriber:
    """The embedded default's ASR (edge.detect.asr: whisper tiny.en shipped in a package)."""
    from edge.detect.asr import Transcriber as Asr

    asr = Asr(threads)

    def transcribe(audio: np.ndarray, rate: int) -> str:
        if rate != 16000:
            raise CapabilityError("the transcriber needs 16 kHz audio")
        return asr.transcribe(audio)

    return transcribe


def embedded_describer(threads: int = 1, frames: int = 2) -> Describer:
    """The vision node's describer (edge.memory.describe: PP-OCRv4 and MediaPipe's face detector, shipped in
    packages) on the frozen frames: the oldest and the newest of them (RGB), each new observation once."""
    from edge.memory.describe import SceneDescriber, in_words

    describer = SceneDescriber(threads)

    def describe(images: list[np.ndarray]) -> str:
        picks = [images[int(i)] for i in sorted(set(np.linspace(0, len(images) - 1, frames).round()))]
        seen: list[str] = []
        for rgb in picks:
            said = in_words(describer(np.ascontiguousarray(rgb[:, :, ::-1])))
            if said and said not in seen:
                seen.append(said)
        return ", then ".join(seen)

    return describe
