"""A Home Assistant-style pipeline against the server, with the `wyoming` package's own client events: the
satellite's microphone streams to the wake service until `detection`, the request goes to speech to text, the
transcript to the conversation handler, the answer to text to speech."""
from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

pytest.importorskip("wyoming", reason="pip install wyoming (the wyoming extra)")
pytest.importorskip("pymicro_wakeword", reason="pip install pymicro-wakeword (the models extra)")

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize
from wyoming.wake import Detect, Detection

from test_wyoming import exchange, running

from edge.audio_format import RATE
from edge.detect.asr import Transcriber
from edge.wyoming.converse import Conversation
from edge.wyoming.handler import Models
from edge.wyoming.serve import harness_config, installed_voices, parser
from kernels.resample import resample


def _pcm(audio: np.ndarray) -> bytes:
    return (np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()


def _chunks(pcm: bytes, size: int = 2048) -> list:
    return [AudioChunk(rate=RATE, width=2, channels=1, audio=pcm[i:i + size]).event() for i in range(0, len(pcm), size)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    cfg = harness_config(parser().parse_args(["--state", str(tmp_path_factory.mktemp("state"))]))
    conversation = Conversation(cfg)
    voices = installed_voices(1)
    gen = running(Models(Transcriber(1, "base", beam_size=5), voices, conversation))
    yield next(gen), voices
    next(gen, None)
    conversation.close()


def test_describe_lists_asr_tts_wake_and_handle(server):
    uri, _ = server
    info = Info.from_event(asyncio.run(exchange(uri, [Describe().event()], "info"))[0])
    assert info.asr and info.tts and info.handle and info.wake
    assert {m.name for m in info.wake[0].models} >= {"okay_nabu", "hey_jarvis"}


def test_wake_then_asr_then_handle_then_tts(server):
    uri, voices = server
    piper = voices.voice("piper")
    wake = resample(np.concatenate(list(piper.synthesize("Okay Nabu."))), piper.sample_rate, RATE)
    quiet = np.zeros(RATE, np.float32)
    stream = _pcm(np.concatenate([quiet, wake.astype(np.float32), quiet]))
    request = _pcm(resample(np.concatenate(list(piper.synthesize("What is seven times six?"))),
                            piper.sample_rate, RATE).astype(np.float32))
    stages: dict[str, float] = {}

    async def run() -> tuple[Detection, str, str, bytes]:
        async with AsyncTcpClient.from_uri(uri) as client:  # the satellite's wake stream
            await client.write_event(Detect(names=["okay_nabu"]).event())
            await client.write_event(AudioStart(rate=RATE, width=2, channels=1).event())
            for e in _chunks(stream):
                await client.write_event(e)
            start = time.monotonic()
            detection = await asyncio.wait_for(client.read_event(), 60)
            stages["wake"] = time.monotonic() - start
            await client.write_event(AudioStop().event())
        async with AsyncTcpClient.from_uri(uri) as client:  # speech to text
            start = time.monotonic()
            for e in [Transcribe(language="en").event(), AudioStart(rate=RATE, width=2, channels=1).event(),
                      *_chunks(request), AudioStop().event()]:
                await client.write_event(e)
            heard = Transcript.from_event(await asyncio.wait_for(client.read_event(), 120)).text
            stages["asr"] = time.monotonic() - start
        async with AsyncTcpClient.from_uri(uri) as client:  # the conversation agent
            start = time.monotonic()
            await client.write_event(Transcript(text=heard).event())
            answer = Handled.from_event(await asyncio.wait_for(client.read_event(), 120)).text
            stages["handle"] = time.monotonic() - start
        async with AsyncTcpClient.from_uri(uri) as client:  # text to speech
            start = time.monotonic()
            await client.write_event(Synthesize(text=answer).event())
            audio = b""
            while (e := await asyncio.wait_for(client.read_event(), 120)).type != "audio-stop":
                if e.type == "audio-chunk":
                    audio += AudioChunk.from_event(e).audio
            stages["tts"] = time.monotonic() - start
        return Detection.from_event(detection), heard, answer, audio

    detection, heard, answer, audio = asyncio.run(run())
    print("pipeline stages (s):", {k: round(v, 2) for k, v in stages.items()})
    assert detection.name == "okay_nabu" and 1000 <= detection.timestamp <= 3500
    assert "seven" in heard.lower() or "7" in heard, heard
    assert "42" in answer, answer
    assert len(audio) / 2 / piper.sample_rate > 0.5


def test_a_stream_without_the_word_is_not_detected(server):
    uri, _ = server
    from edge.bench.spoken import say
    pcm = _pcm(say("Please pass the salt and the pepper."))
    got = asyncio.run(exchange(uri, [Detect(names=["okay_nabu"]).event(), *_chunks(pcm), AudioStop().event()],
                               "not-detected"))
    assert [e.type for e in got] == ["not-detected"]
