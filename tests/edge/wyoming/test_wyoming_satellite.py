"""The device as a Home Assistant satellite: the `wyoming` package's client plays Home Assistant's part as the
Wyoming satellite protocol has it (run-satellite; the satellite asks for run-pipeline after its own wake word and
streams audio-start/chunk; Home Assistant answers transcript, then the reply as audio), and the device's
local barge-in: the wake word said over the reply stops it and starts a new request."""
from __future__ import annotations

import asyncio
import socket
import threading
import time
from functools import partial

import numpy as np
import pytest

pytest.importorskip("wyoming", reason="pip install wyoming (the wyoming extra)")

from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from wyoming.satellite import RunSatellite
from wyoming.server import AsyncServer

from edge.audio_format import RATE
from edge.wyoming.satellite import SatelliteHandler
from kernels.resample import resample

pytestmark = pytest.mark.slow
REPLY_S = 12.0  # longer than the wait for the second wake word, even on a loaded machine


class Mic:
    """A recording read as a microphone is: what was captured so far, nothing after the end."""

    def __init__(self, audio: np.ndarray) -> None:
        self.audio, self.at = audio, 0

    def read(self, n: int) -> np.ndarray | None:
        if self.at >= len(self.audio):
            return None
        out = self.audio[self.at:self.at + n]
        self.at += n
        return out


class Speaker:
    """A speaker that takes as long as the sound to play it, and keeps what it played."""

    rate = RATE

    def __init__(self) -> None:
        self.played: list[np.ndarray] = []

    def write(self, t_ns: int, samples: np.ndarray) -> None:
        self.played.append(samples)
        time.sleep(len(samples) / self.rate)

    def seconds(self) -> float:
        return sum(len(p) for p in self.played) / self.rate


def microphone() -> np.ndarray:
    """Quiet, "Okay Nabu", a request, quiet, and "Okay Nabu" again at 5.5 s (over the reply)."""
    from edge.speech.piper.voice import PiperVoice
    piper = PiperVoice()

    def say(text: str) -> np.ndarray:
        return resample(piper.sentence_audio(text), piper.sample_rate, RATE).astype(np.float32)

    wake, request = say("Okay Nabu."), say("Turn on the kitchen light.")
    audio = np.zeros(int(10.0 * RATE), np.float32)
    audio[RATE:RATE + len(wake)] += wake
    at = RATE + len(wake) + int(0.2 * RATE)
    audio[at:at + len(request)] += request
    audio[int(5.5 * RATE):int(5.5 * RATE) + len(wake)] += wake
    return audio + 0.001 * np.random.default_rng(0).standard_normal(len(audio)).astype(np.float32)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def satellite():
    speaker, port = Speaker(), free_port()
    loop = asyncio.new_event_loop()
    server = AsyncServer.from_uri(f"tcp://127.0.0.1:{port}")
    loop.run_until_complete(server.start(partial(SatelliteHandler, Mic(microphone()), speaker, "okay_nabu")))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{port}", speaker
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


async def home_assistant(uri: str) -> dict:
    """Run the satellite; on its pipeline answer with a transcript and a 12 s reply; wait for a second pipeline."""
    seen: dict = {"pipelines": 0, "chunks": 0}
    async with AsyncTcpClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        seen["info"] = Info.from_event(await asyncio.wait_for(client.read_event(), 30))
        await client.write_event(RunSatellite().event())
        start = time.monotonic()
        while seen["pipelines"] < 2:
            e = await asyncio.wait_for(client.read_event(), 30)
            assert e is not None, "the satellite closed the connection"
            if e.type == "run-pipeline":
                seen["pipelines"] += 1
                seen["last_pipeline_at"] = time.monotonic()
                seen.setdefault("first_pipeline_s", time.monotonic() - start)
                seen["pipeline"] = e.data
            elif e.type == "audio-chunk" and seen["pipelines"] == 1:
                seen["chunks"] += 1
                if seen["chunks"] == 10:  # Home Assistant's recognizer has heard enough
                    await client.write_event(Transcript(text="turn on the kitchen light").event())
            elif e.type == "audio-stop" and seen["pipelines"] == 1:
                seen["chunks_at_stop"] = seen["chunks"]
                rate = 22050
                tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(int(REPLY_S * rate)) / rate) * 32767).astype("<i2")
                await client.write_event(AudioStart(rate=rate, width=2, channels=1).event())
                pcm = tone.tobytes()
                for i in range(0, len(pcm), 4096):
                    await client.write_event(AudioChunk(rate=rate, width=2, channels=1, audio=pcm[i:i + 4096]).event())
                await client.write_event(AudioStop().event())
                seen["reply_sent_at"] = time.monotonic()
    return seen


def test_satellite_streams_after_its_wake_word_plays_the_reply_and_barges_in(satellite):
    uri, speaker = satellite
    seen = asyncio.run(home_assistant(uri))
    assert seen["info"].satellite is not None and seen["info"].satellite.active_wake_words == ["okay_nabu"]
    assert seen["pipeline"]["start_stage"] == "asr" and seen["pipeline"]["end_stage"] == "tts"
    assert 1.0 < seen["first_pipeline_s"] < 4.0  # after "Okay Nabu" at 1 s, not before
    assert seen["chunks_at_stop"] <= 12  # streaming stopped once the transcript came
    time.sleep(1.0)  # what the speaker still plays after the barge-in, if anything
    played = speaker.seconds()
    until_wake = seen["last_pipeline_at"] - seen["reply_sent_at"]
    assert 0.5 < played < REPLY_S - 2.0, f"the reply played {played:.1f} s; the wake word should have cut it"
    assert played < until_wake + 0.5, f"the reply played {played:.1f} s, {until_wake:.1f} s of it before the barge-in"
