"""The Wyoming server driven with the wyoming library's own client events, as Home Assistant's integration does."""
from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("wyoming", reason="pip install wyoming (the wyoming extra)")

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize

from edge.bench.spoken import say
from edge.cli import main as cli_main
from edge.wyoming.converse import Conversation
from edge.wyoming.handler import Models
from edge.wyoming.serve import load_models, serve


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def models():
    return load_models(1)


@pytest.fixture(scope="module")
def uri(models):
    yield from running(models)


@pytest.fixture(scope="module")
def harness_uri(models, tmp_path_factory):
    """The same models with a conversation handler: the time server's tools, rules first, no model behind."""
    pytest.importorskip("mcp_server_time", reason="pip install mcp-server-time (the harness extra)")
    cfg = {"dir": str(tmp_path_factory.mktemp("wyoming")), "retries": 0,
           "mcp": [{"name": "time", "command": sys.executable, "args": ["-m", "mcp_server_time"]}],
           "router": {"fast": {"scripted": {"rules": [], "default": None}}}}
    conversation = Conversation(cfg)
    assert conversation.problems == []
    yield from running(Models(models.recognizer, models.voice, conversation))
    conversation.close()


def running(models: Models, **options):
    """The real server on a loopback port, on its own event loop."""
    port = free_port()
    loop = asyncio.new_event_loop()
    ready = asyncio.Event()
    task = loop.create_task(serve(f"tcp://127.0.0.1:{port}", models, ready, **options))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(ready.wait(), loop).result(60)
    yield f"tcp://127.0.0.1:{port}"

    async def stop() -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


async def exchange(uri: str, events: list[Event], until: str, limit: int = 5000) -> list[Event]:
    """Send the events, read back until an event of type `until` (or an error)."""
    got = []
    async with AsyncTcpClient.from_uri(uri) as client:
        for e in events:
            await client.write_event(e)
        while len(got) < limit:
            e = await asyncio.wait_for(client.read_event(), 120)
            assert e is not None, "the server closed the connection"
            got.append(e)
            if e.type in (until, "error"):
                return got
    raise AssertionError("too many events")


def test_describe_is_answered_with_info_naming_both_programs(uri):
    [event] = asyncio.run(exchange(uri, [Describe().event()], "info"))
    info = Info.from_event(event)
    assert info.asr[0].installed and info.asr[0].models[0].languages == ["en"]
    assert info.tts[0].voices[0].name == "piper"


def test_spoken_audio_comes_back_as_its_transcript(uri):
    audio = say("Turn off the kitchen light.")
    pcm = (audio * 32767).astype("<i2").tobytes()
    events = [Transcribe(language="en").event(), AudioStart(rate=16000, width=2, channels=1).event()]
    events += [AudioChunk(rate=16000, width=2, channels=1, audio=pcm[i:i + 2048]).event()
               for i in range(0, len(pcm), 2048)]
    events.append(AudioStop().event())
    got = asyncio.run(exchange(uri, events, "transcript"))
    text = Transcript.from_event(got[-1]).text.lower()
    assert "kitchen light" in text and "off" in text, text


def test_audio_at_another_rate_is_converted_before_recognition(uri):
    audio = say("What time is it in Tokyo?")
    x = np.interp(np.arange(0, len(audio), 16000 / 22050), np.arange(len(audio)), audio)  # as a 22.05 kHz mic
    pcm = (x * 32767).astype("<i2").tobytes()
    events = [Transcribe().event(), AudioStart(rate=22050, width=2, channels=1).event(),
              AudioChunk(rate=22050, width=2, channels=1, audio=pcm).event(), AudioStop().event()]
    text = Transcript.from_event(asyncio.run(exchange(uri, events, "transcript"))[-1]).text.lower()
    assert "tokyo" in text, text


def test_text_comes_back_as_speech(uri):
    got = asyncio.run(exchange(uri, [Synthesize(text="The kitchen light is off.").event()], "audio-stop"))
    assert got[0].type == "audio-start" and got[-1].type == "audio-stop"
    chunks = [AudioChunk.from_event(e) for e in got[1:-1]]
    assert chunks and all(c.rate == 22050 and c.width == 2 and c.channels == 1 for c in chunks)
    pcm = np.frombuffer(b"".join(c.audio for c in chunks), np.int16)
    assert 0.8 < len(pcm) / 22050 < 4 and np.abs(pcm).max() > 3000  # a short sentence, audibly spoken


def test_bad_events_get_an_error_event_and_the_connection_keeps_serving(uri):
    async def run() -> list[Event]:
        out = []
        async with AsyncTcpClient.from_uri(uri) as client:
            for e in [Event(type="no-such-event"), AudioChunk(rate=16000, width=2, channels=1, audio=b"\0\0").event(),
                      Event(type="synthesize", data={}), Synthesize(text="   ").event(), Describe().event()]:
                await client.write_event(e)
                out.append(await asyncio.wait_for(client.read_event(), 60))
        return out
    got = asyncio.run(run())
    assert [e.type for e in got] == ["error"] * 4 + ["info"]
    texts = [Error.from_event(e).text for e in got[:4]]
    assert "no-such-event" in texts[0] and "audio-start first" in texts[1] and "some text" in texts[3]


def test_a_transcript_is_answered_through_the_harness(harness_uri, uri):
    info = Info.from_event(asyncio.run(exchange(harness_uri, [Describe().event()], "info"))[0])
    assert info.handle and info.handle[0].models[0].languages == ["en"]
    got = asyncio.run(exchange(harness_uri, [Transcript(text="What time is it in Tokyo right now?").event()],
                               "handled"))
    text = Handled.from_event(got[-1]).text
    assert text.startswith("It's ") and text.endswith(" in Tokyo."), text
    got = asyncio.run(exchange(harness_uri, [Transcript(text="tell me a story").event()], "not-handled"))
    assert got[-1].type == "not-handled" and "no capability fits" in NotHandled.from_event(got[-1]).text
    # without --harness a transcript is an error event that says how to get a handler
    [err] = asyncio.run(exchange(uri, [Transcript(text="hello").event()], "error"))
    assert "--harness" in Error.from_event(err).text


def test_listening_beyond_loopback_needs_public(capsys):
    assert cli_main(["wyoming", "--uri", "tcp://0.0.0.0:10300"]) == 2
    err = capsys.readouterr().err
    assert "--public" in err and "Traceback" not in err and err.count("\n") == 1
    assert cli_main(["wyoming", "--uri", "http://127.0.0.1:10300"]) == 2
    assert "tcp://HOST:PORT" in capsys.readouterr().err
    assert cli_main(["wyoming", "--harness", "/no/such/harness.json"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_home_assistant_discovers_the_server_over_zeroconf_and_describes_it(models):
    """Announced (forced on, as loopback is off by default), found by zeroconf's own browser, described at the
    address and port the announcement gives, as Home Assistant's discovery does; withdrawn when the server stops."""
    pytest.importorskip("zeroconf", reason="pip install zeroconf (the wyoming extra)")
    from zeroconf import IPVersion, ServiceBrowser, ServiceStateChange, Zeroconf

    from edge.wyoming.announce import SERVICE_TYPE

    seen: list[tuple[str, ServiceStateChange]] = []
    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    browser = ServiceBrowser(zc, SERVICE_TYPE, handlers=[lambda zeroconf, service_type, name, state_change:
                                                         seen.append((name, state_change))])
    try:
        server = running(models, zeroconf="on", zeroconf_name="venus-edge-test")
        uri = next(server)
        deadline = time.monotonic() + 10
        while not any(c == ServiceStateChange.Added for _, c in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ("venus-edge-test._wyoming._tcp.local.", ServiceStateChange.Added) in seen
        info = zc.get_service_info(SERVICE_TYPE, "venus-edge-test._wyoming._tcp.local.", timeout=3000)
        assert info is not None and info.parsed_addresses() == ["127.0.0.1"]
        assert f"tcp://127.0.0.1:{info.port}" == uri
        got = asyncio.run(exchange(f"tcp://{info.parsed_addresses()[0]}:{info.port}", [Describe().event()], "info"))
        assert Info.from_event(got[-1]).asr and Info.from_event(got[-1]).tts
        next(server, None)  # stops the server
        deadline = time.monotonic() + 10
        while not any(c == ServiceStateChange.Removed for _, c in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ("venus-edge-test._wyoming._tcp.local.", ServiceStateChange.Removed) in seen
    finally:
        browser.cancel()
        zc.close()


def test_the_announcement_is_on_by_default_only_beyond_loopback():
    from edge.wyoming.serve import announcement

    assert announcement("tcp://127.0.0.1:10300", "auto") is None
    assert announcement("tcp://localhost:10300", "auto") is None
    assert announcement("unix:///tmp/w.sock", "on") is None
    assert announcement("tcp://0.0.0.0:10300", "off") is None
    from edge.wyoming.announce import should_announce
    assert should_announce("0.0.0.0", "auto") and should_announce("192.168.1.20", "auto")
