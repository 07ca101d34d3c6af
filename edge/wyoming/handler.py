"""One Wyoming connection: describe -> info, audio -> transcript, text -> audio; a bad event -> an error event.

The models are shared by every connection and are not thread-safe, so each
runs under its own lock on a worker thread (the event loop keeps serving); a
voice is held one sentence at a time (edge/wyoming/voices.py). Events are read
within bounds (edge/wyoming/events.py): a malformed one is answered with an
`error` event and a log line, and the connection ends since its framing is lost.
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
from wyoming.wake import Detect, NotDetected
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped

from edge.audio_format import RATE
from edge.language.sentences import split_sentences
from edge.wyoming.events import BadEvent, read_event
from edge.wyoming.voices import MAX_TEXT, Voice, VoiceInfo, Voices

log = logging.getLogger(__name__)
CHUNK_SAMPLES = 1024  # per audio-chunk event sent back
MAX_AUDIO_S = 60  # a longer utterance is refused rather than kept in memory
ATTRIBUTION = Attribution(name="venus-edge", url="https://github.com/")  # the programs: this runtime
WHISPER = Attribution(name="OpenAI", url="https://github.com/openai/whisper")  # the models: who made them
PIPER = Attribution(name="Rhasspy", url="https://github.com/rhasspy/piper")


class Recognizer(Protocol):
    def transcribe(self, audio: np.ndarray) -> str: ...


class Answerer(Protocol):
    def answer(self, text: str) -> tuple[bool, str]: ...


PIPER_INFO = VoiceInfo("piper", "Piper (joe, en-US)", "en-US")


class Models:
    """The recognizer, used by one connection at a time; the voices; the conversation handler if any."""

    def __init__(self, recognizer: Recognizer, voice: Voice | Voices, answerer: Answerer | None = None) -> None:
        self.recognizer, self.answerer = recognizer, answerer
        self.voices = voice if isinstance(voice, Voices) else Voices({"piper": (voice, PIPER_INFO)})
        self._asr = threading.Lock()

    @property
    def voice(self) -> Voice:
        """The default voice."""
        return self.voices.voice()

    def transcribe(self, audio: np.ndarray) -> str:
        with self._asr:
            return self.recognizer.transcribe(audio)


def info(converses: bool = False, asr_name: str = "tiny.en", voices: list[VoiceInfo] | None = None) -> Info:
    asr = AsrProgram(name="venus-edge-asr", attribution=ATTRIBUTION, installed=True, version=None,
                     description=f"The device's embedded speech recognizer (whisper {asr_name})",
                     models=[AsrModel(name=asr_name, attribution=WHISPER, installed=True, version=None,
                                      description=f"whisper {asr_name}", languages=["en"])])
    tts = TtsProgram(name="venus-edge-tts", attribution=ATTRIBUTION, installed=True, version=None,
                     description="The device's embedded voices", supports_synthesize_streaming=True,
                     voices=[TtsVoice(name=v.name, attribution=PIPER if v.name == "piper" else ATTRIBUTION,
                                      installed=True, version=None, description=v.description,
                                      languages=[v.language]) for v in (voices or [PIPER_INFO])])
    handle = [HandleProgram(name="venus-edge-harness", attribution=ATTRIBUTION, installed=True, version=None,
                            description="The device's harness: its tools, Home Assistant's and its chat model",
                            models=[HandleModel(name="harness", attribution=ATTRIBUTION, installed=True,
                                                version=None, description="routing to tools, then spoken answers",
                                                languages=["en"])],
                            supports_home_control=True)] if converses else []
    return Info(asr=[asr], tts=[tts], handle=handle, wake=_wake())


def _wake() -> list:
    """The wake service where the wake-word models are installed."""
    try:
        from edge.wyoming.wake import wake_program
        return [wake_program(ATTRIBUTION)]
    except ImportError:
        return []


class Handler(AsyncEventHandler):
    def __init__(self, models: Models, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.models = models
        self.converter = AudioChunkConverter(rate=RATE, width=2, channels=1)
        self.audio: list[bytes] | None = None  # open between audio-start and audio-stop
        self.size = 0
        self.stream: _Stream | None = None  # open between synthesize-start and synthesize-stopped
        self.wake = None  # a WakeListening between detect and audio-stop

    async def run(self) -> None:
        """Events until the client leaves; a malformed event gets an error event, then the connection ends."""
        self._is_running = True
        try:
            while self._is_running:
                try:
                    event = await read_event(self.reader)
                except BadEvent as exc:
                    log.warning("wyoming: a client's event was refused: %s", exc)
                    await self.write_event(Error(text=str(exc), code="BadEvent").event())
                    break
                if event is None or not await self.handle_event(event):
                    break
        except (ConnectionError, BrokenPipeError):
            pass  # the client left; nothing to answer
        finally:
            await self.disconnect()
            self.writer.close()

    async def handle_event(self, event: Event) -> bool:
        try:
            await self._handle(event)
        except (ConnectionError, BrokenPipeError):
            raise
        except Exception as exc:  # noqa: BLE001  (a bad event is answered, the connection stays up)
            log.warning("wyoming: %s event refused: %s", event.type, exc)
            await self.write_event(Error(text=f"the {event.type} event could not be handled ({exc})",
                                         code=type(exc).__name__).event())
        return True

    async def _handle(self, event: Event) -> None:
        if Describe.is_type(event.type):
            await self.write_event(info(self.models.answerer is not None,
                                        getattr(self.models.recognizer, "name", "tiny.en"),
                                        self.models.voices.infos).event())
        elif Detect.is_type(event.type):
            from edge.wyoming.wake import WakeListening
            self._end_wake()
            self.wake = await asyncio.to_thread(WakeListening, Detect.from_event(event).names)
        elif self.wake is not None and AudioChunk.is_type(event.type):
            chunk = self.converter.convert(AudioChunk.from_event(event))
            for hit in await asyncio.to_thread(self.wake.feed, chunk.audio):
                await self.write_event(hit.event())
        elif self.wake is not None and AudioStart.is_type(event.type):
            AudioStart.from_event(event)
        elif self.wake is not None and AudioStop.is_type(event.type):
            if not self.wake.heard:
                await self.write_event(NotDetected().event())
            self._end_wake()
        elif Transcribe.is_type(event.type):
            self._end_wake()
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
        elif SynthesizeStart.is_type(event.type):
            start = SynthesizeStart.from_event(event)
            self.stream = _Stream(self.models.voices.pick(start.voice.name if start.voice else None))
        elif SynthesizeChunk.is_type(event.type):
            if self.stream is None:
                raise ValueError("synthesize-chunk before synthesize-start; send synthesize-start first")
            self.stream.text += SynthesizeChunk.from_event(event).text
            if len(self.stream.text) > MAX_TEXT:
                self.stream = None
                raise ValueError(f"the streamed text is longer than {MAX_TEXT} characters; send it in parts")
            await self._say_finished_sentences(self.stream)
        elif SynthesizeStop.is_type(event.type):
            if self.stream is None:
                raise ValueError("synthesize-stop without synthesize-start; send synthesize-start first")
            stream, self.stream = self.stream, None
            await self._say(stream, stream.text)
            if stream.started:
                await self.write_event(AudioStop().event())
            await self.write_event(SynthesizeStopped().event())
        elif Synthesize.is_type(event.type):
            if self.stream is not None:
                return  # a streaming client also sends the whole text for older servers: already being said
            request = Synthesize.from_event(event)
            if not request.text.strip():
                raise ValueError("synthesize needs some text to say")
            once = _Stream(self.models.voices.pick(request.voice.name if request.voice else None))
            await self._say(once, request.text)
            if not once.started:
                await self._start_audio(once)
            await self.write_event(AudioStop().event())
        else:
            raise ValueError(f"this server does not handle {event.type!r} events (it serves describe, "
                             "transcribe with audio, detect with audio, synthesize (also streamed), and transcript)")

    def _end_wake(self) -> None:
        if self.wake is not None:
            self.wake.close()
            self.wake = None

    async def disconnect(self) -> None:
        self._end_wake()

    async def _say_finished_sentences(self, stream: "_Stream") -> None:
        """Say the streamed text's complete sentences now; keep the unfinished last one for more text."""
        parts = split_sentences(stream.text)
        if len(parts) < 2 and not stream.text.rstrip().endswith((".", "!", "?")):
            return
        done = parts if stream.text.rstrip().endswith((".", "!", "?")) else parts[:-1]
        stream.text = "" if done is parts else parts[-1]
        await self._say(stream, " ".join(done))

    async def _start_audio(self, stream: "_Stream") -> None:
        stream.started = True
        await self.write_event(AudioStart(rate=self.models.voices.rate(stream.voice), width=2, channels=1).event())

    async def _say(self, stream: "_Stream", text: str) -> None:
        """`text`'s audio, sent sentence by sentence as each is made (the voice is shared a sentence at a time);
        a client that has left gets nothing more made."""
        if not text.strip():
            return
        rate = self.models.voices.rate(stream.voice)
        pieces = self.models.voices.sentences(text, stream.voice)
        while not self.writer.is_closing():
            audio = await asyncio.to_thread(next, pieces, None)
            if audio is None:
                return
            if not stream.started:
                await self._start_audio(stream)
            pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2")
            for i in range(0, len(pcm), CHUNK_SAMPLES):
                await self.write_event(AudioChunk(rate=rate, width=2, channels=1,
                                                  audio=pcm[i:i + CHUNK_SAMPLES].tobytes()).event())


class _Stream:
    """One synthesis: its voice, the text not yet said, whether audio-start was sent."""

    def __init__(self, voice: str) -> None:
        self.voice, self.text, self.started = voice, "", False
