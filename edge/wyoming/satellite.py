"""`venus-edge satellite`: the device as a Home Assistant voice satellite over Wyoming.

Home Assistant connects (the Wyoming integration, "satellite" device) and sends
`run-satellite`. From then the device listens with its own wake word; when it
hears it, it asks for a pipeline (`run-pipeline`, speech to speech) and streams
the microphone (`audio-start`, `audio-chunk`...) until Home Assistant says what
it heard (`transcript`), then plays the reply Home Assistant sends back as
audio. Saying the wake word over a reply stops the reply at once and starts a
new request: the local barge-in a voice session has.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Protocol

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.asr import Transcript
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, Satellite
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.server import AsyncEventHandler

from edge.audio_format import RATE
from edge.detect.wake import WakeDetector

log = logging.getLogger(__name__)
BLOCK = 1280  # 80 ms of microphone per read and per chunk sent
LISTEN_LIMIT_S = 15.0  # a request streams at most this long when no transcript comes


class Mic(Protocol):
    def read(self, n: int) -> np.ndarray | None: ...


class Speaker(Protocol):
    rate: int

    def write(self, t_ns: int, samples: np.ndarray) -> None: ...


def info(wake: str) -> Info:
    me = Attribution(name="venus-edge", url="")
    return Info(satellite=Satellite(name="venus-edge", attribution=me, installed=True, description=
                                    f"venus-edge satellite (wake word {wake})", version=None, area=None,
                                    has_vad=False, active_wake_words=[wake], max_active_wake_words=1,
                                    supports_trigger=False))


class Reply:
    """Home Assistant's spoken answer, played in 80 ms pieces so a barge-in stops it within one."""

    def __init__(self, speaker: Speaker) -> None:
        self.speaker = speaker
        self.rate, self.pieces = RATE, []
        self.stopped = threading.Event()
        self.played = 0  # samples that reached the speaker

    def play(self) -> None:
        audio = np.concatenate(self.pieces) if self.pieces else np.zeros(0, np.float32)
        if self.rate != self.speaker.rate:
            from kernels.resample import resample
            audio = resample(audio, self.rate, self.speaker.rate).astype(np.float32)
        step = self.speaker.rate // 12
        for i in range(0, len(audio), step):
            if self.stopped.is_set():
                return
            self.speaker.write(0, audio[i:i + step])
            self.played += len(audio[i:i + step])


class SatelliteHandler(AsyncEventHandler):
    """One Home Assistant connection: the microphone loop runs between `run-satellite` and `pause-satellite`."""

    def __init__(self, mic: Mic, speaker: Speaker, wake: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mic, self.speaker = mic, speaker
        self.pace = not getattr(mic, "live", False)  # a recording is read at the pace a microphone would give it
        self.detector = WakeDetector(wake)
        self.loop_task: asyncio.Task | None = None
        self.streaming = False
        self.heard: str | None = None  # the last transcript
        self.reply: Reply | None = None
        self.playing: asyncio.Task | None = None

    async def handle_event(self, event: Event) -> bool:
        if Describe.is_type(event.type):
            await self.write_event(info(self.detector.name).event())
        elif RunSatellite.is_type(event.type) and self.loop_task is None:
            self.loop_task = asyncio.create_task(self._listen())
        elif PauseSatellite.is_type(event.type) and self.loop_task is not None:
            self.loop_task.cancel()
            self.loop_task = None
        elif Transcript.is_type(event.type):
            self.heard = Transcript.from_event(event).text
            await self._stop_streaming()
        elif AudioStart.is_type(event.type):
            start = AudioStart.from_event(event)
            self._barge_in()
            self.reply = Reply(self.speaker)
            self.reply.rate = start.rate
        elif AudioChunk.is_type(event.type) and self.reply is not None:
            chunk = AudioChunk.from_event(event)
            self.reply.pieces.append(np.frombuffer(chunk.audio, "<i2").astype(np.float32) / 32768.0)
        elif AudioStop.is_type(event.type) and self.reply is not None:
            reply, self.reply = self.reply, None
            self.playing = asyncio.create_task(asyncio.to_thread(reply.play))
            self.playing.reply = reply  # type: ignore[attr-defined]
        return True

    def _barge_in(self) -> None:
        """Stop the reply being played (the user spoke over it)."""
        if self.playing is not None and not self.playing.done():
            self.playing.reply.stopped.set()  # type: ignore[attr-defined]

    async def _stop_streaming(self) -> None:
        if self.streaming:
            self.streaming = False
            await self.write_event(AudioStop().event())

    async def _listen(self) -> None:
        started = 0.0
        loop = asyncio.get_running_loop()
        while True:
            block = self.mic.read(BLOCK)
            if block is None:  # the microphone has nothing yet (or a recording has ended)
                await asyncio.sleep(BLOCK / RATE / 4)
                continue
            if self.pace:
                await asyncio.sleep(BLOCK / RATE)
            hits = self.detector.feed(block)
            if hits and not self.streaming:
                self._barge_in()
                self.streaming, started, self.heard = True, loop.time(), None
                log.info("wake word heard; asking Home Assistant for a pipeline")
                await self.write_event(RunPipeline(start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS,
                                                   restart_on_end=False).event())
                await self.write_event(AudioStart(rate=RATE, width=2, channels=1).event())
            elif self.streaming:
                pcm = (np.clip(block, -1, 1) * 32767).astype("<i2").tobytes()
                await self.write_event(AudioChunk(rate=RATE, width=2, channels=1, audio=pcm).event())
                if loop.time() - started > LISTEN_LIMIT_S:
                    await self._stop_streaming()

    async def disconnect(self) -> None:
        if self.loop_task is not None:
            self.loop_task.cancel()
        self._barge_in()
