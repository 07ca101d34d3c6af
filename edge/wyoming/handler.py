"""One Wyoming connection: describe -> info, audio -> transcript, text -> audio; a bad event -> an error event.

The models are shared by every connection and are not thread-safe, so each
runs under its own lock on a worker thread (the event loop keeps serving).
"""
from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Protocol

import numpy as np
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import (AsrModel, AsrProgram, Attribution, Describe, HandleModel, HandleProgram, Info, TtsProgram,
                          TtsVoice)
from wyoming.server import AsyncEventHandler
from wyoming.tts import Synthesize

from edge.audio_format import RATE

log = logging.getLogger(__name__)
CHUNK_SAMPLES = 1024  # per audio-chunk event sent back
MAX_AUDIO_S = 60  # a longer utterance is refused rather than kept in memory
ATTRIBUTION = Attribution(name="venus-edge", url="https://github.com/")  # the programs: this runtime
WHISPER = Attribution(name="OpenAI", url="https://github.com/openai/whisper")  # the models: who made them
PIPER = Attribution(name="Rhasspy", url="https://github.com/rhasspy/piper")


class Recognizer(Protocol):
    def transcribe(self, audio: np.ndarray) -> str: ...


class Voice(Protocol):
    sample_rate: int

    def synthesize(self, text: str): ...


class Answerer(Protocol):
    def answer(self, text: str) -> tuple[bool, str]: ...


class Models:
    """The recognizer and the voice, each used by one connection at a time; the conversation handler if any."""

    def __init__(self, recognizer: Recognizer, voice: Voice, answerer: Answerer | None = None) -> None:
        self.recognizer, self.voice, self.answerer = recognizer, voice, answerer
        self._asr, self._tts = threading.Lock(), threading.Lock()

    def transcribe(self, audio: np.ndarray) -> str:
        with self._asr:
            return self.recognizer.transcribe(audio)

    def speak(self, text: str) -> np.ndarray:
        with self._tts:
            parts = list(self.voice.synthesize(text))
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def info(converses: bool = False) -> Info:
    asr = AsrProgram(name="venus-edge-asr", attribution=ATTRIBUTION, installed=True, version=None,
                     description="The device's embedded speech recognizer (whisper tiny.en)",
                     models=[AsrModel(name="tiny.en", attribution=WHISPER, installed=True, version=None,
                                      description="whisper tiny.en", languages=["en"])])
    tts = TtsProgram(name="venus-edge-tts", attribution=ATTRIBUTION, installed=True, version=None,
                     description="The device's embedded Piper voice",
                     voices=[TtsVoice(name="piper", attribution=PIPER, installed=True, version=None,
                                      description="Piper (joe, en-US)", languages=["en-US"])])
    handle = [HandleProgram(name="venus-edge-harness", attribution=ATTRIBUTION, installed=True, version=None,
                            description="The device's harness: its tools, Home Assistant's and its chat model",
                            models=[HandleModel(name="harness", attribution=ATTRIBUTION, installed=True,
                                                version=None, description="routing to tools, then spoken answers",
                                                languages=["en"])],
                            supports_home_control=True)] if converses else []
    return Info(asr=[asr], tts=[tts], handle=handle)


class Handler(AsyncEventHandler):
    def __init__(self, models: Models, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.models = models
        self.converter = AudioChunkConverter(rate=RATE, width=2, channels=1)
        self.audio: list[bytes] | None = None  # open between audio-start and audio-stop
        self.size = 0

    async def handle_event(self, event: Event) -> bool:
        try:
            await self._handle(event)
        except Exception as exc:  # noqa: BLE001  (a bad event is answered, the connection stays up)
            log.warning("wyoming: %s event refused: %s", event.type, exc)
            await self.write_event(Error(text=f"the {event.type} event could not be handled ({exc})",
                                         code=type(exc).__name__).event())
        return True

    async def _handle(self, event: Event) -> None:
        if Describe.is_type(event.type):
            await self.write_event(info(self.models.answerer is not None).event())
        elif Transcribe.is_type(event.type):
            self.audio = None  # a new request: audio follows
        elif AudioStart.is_type(event.type):
            AudioStart.from_event(event)
            self.audio, self.size = [], 0
        elif AudioChunk.is_type(event.type):
            if self.audio is None:
                raise ValueError("audio-chunk before audio-start; send audio-start first")
            chunk = self.converter.convert(AudioChunk.from_event(event))
            self.size += len(chunk.audio)
            if self.size > MAX_AUDIO_S * RATE * 2:
                self.audio = None
                raise ValueError(f"the audio is longer than {MAX_AUDIO_S} s; send one utterance at a time")
            self.audio.append(chunk.audio)
        elif AudioStop.is_type(event.type):
            if self.audio is None:
                raise ValueError("audio-stop without audio-start; send audio-start and the audio first")
            pcm = np.frombuffer(b"".join(self.audio), np.int16).astype(np.float32) / 32768.0
            self.audio = None
            text = await asyncio.to_thread(self.models.transcribe, pcm)
            await self.write_event(Transcript(text=text, language="en").event())
        elif Transcript.is_type(event.type):
            if self.models.answerer is None:
                raise ValueError("this server has no conversation handler; start it with --harness FILE")
            text = Transcript.from_event(event).text
            ok, said = await asyncio.to_thread(self.models.answerer.answer, text)
            await self.write_event((Handled(text=said) if ok else NotHandled(text=said)).event())
        elif Synthesize.is_type(event.type):
            text = Synthesize.from_event(event).text
            if not text.strip():
                raise ValueError("synthesize needs some text to say")
            await self._send_audio(await asyncio.to_thread(self.models.speak, text))
        else:
            raise ValueError(f"this server does not handle {event.type!r} events (it serves describe, "
                             "transcribe with audio, synthesize, and transcript with --harness)")

    async def _send_audio(self, audio: np.ndarray) -> None:
        rate = self.models.voice.sample_rate
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2")
        await self.write_event(AudioStart(rate=rate, width=2, channels=1).event())
        for i in range(0, len(pcm), CHUNK_SAMPLES):
            await self.write_event(AudioChunk(rate=rate, width=2, channels=1,
                                              audio=pcm[i:i + CHUNK_SAMPLES].tobytes()).event())
        await self.write_event(AudioStop().event())
