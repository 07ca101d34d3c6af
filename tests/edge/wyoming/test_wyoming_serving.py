"""The Wyoming server under clients Home Assistant's and hostile ones: streamed synthesis, the voices installed,
fair sharing of a voice, malformed events answered with an error event, and where a service keeps its state."""
from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

pytest.importorskip("wyoming", reason="pip install wyoming (the wyoming extra)")

from wyoming.audio import AudioChunk
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from test_wyoming import exchange, running

from edge.detect.asr import Transcriber
from edge.wyoming.handler import Models
from edge.wyoming.serve import installed_voices, state_dir
from edge.wyoming.voices import MAX_TEXT


@pytest.fixture(scope="module")
def uri():
    yield from running(Models(Transcriber(1, "tiny.en"), installed_voices(1)))


def _audio_s(events) -> float:
    chunks = [AudioChunk.from_event(e) for e in events if e.type == "audio-chunk"]
    return sum(len(c.audio) // 2 for c in chunks) / chunks[0].rate if chunks else 0.0


def test_describe_lists_streaming_synthesis_every_installed_voice_and_the_recognizer(uri):
    info = Info.from_event(asyncio.run(exchange(uri, [Describe().event()], "info"))[0])
    assert info.tts[0].supports_synthesize_streaming
    assert [v.name for v in info.tts[0].voices] == ["piper", "espeak"]
    assert info.asr[0].models[0].name == "tiny.en"


def test_streamed_text_is_spoken_as_it_arrives_and_ends_with_synthesize_stopped(uri):
    async def run() -> tuple[list, float, float]:
        got: list = []
        async with AsyncTcpClient.from_uri(uri) as client:
            await client.write_event(SynthesizeStart().event())
            await client.write_event(SynthesizeChunk(text="The kitchen light is off. The ").event())
            start = time.monotonic()
            first = await asyncio.wait_for(client.read_event(), 60)  # the first sentence, before the rest is sent
            first_s = time.monotonic() - start
            got.append(first)
            for text in ("hall light ", "is on."):
                await client.write_event(SynthesizeChunk(text=text).event())
            # a streaming client also sends the whole text (for servers that do not stream) before
            # synthesize-stop: it must not be said twice
            await client.write_event(Synthesize(text="The kitchen light is off. The hall light is on.").event())
            await client.write_event(SynthesizeStop().event())
            while got[-1].type != "synthesize-stopped":
                got.append(await asyncio.wait_for(client.read_event(), 60))
            await client.write_event(Describe().event())
            after = await asyncio.wait_for(client.read_event(), 60)
        return got, first_s, after.type
    got, first_s, after = asyncio.run(run())
    types = [e.type for e in got]
    assert types[0] == "audio-start" and types[-2:] == ["audio-stop", "synthesize-stopped"]
    assert types.count("audio-start") == 1 and after == "info"  # one stream, nothing left over
    assert 2.0 < _audio_s(got) < 6.0  # two short sentences, said once


def test_a_voice_is_chosen_by_name_and_an_unknown_one_is_named(uri):
    got = asyncio.run(exchange(uri, [Synthesize(text="Hello there.", voice=SynthesizeVoice(name="espeak")).event()],
                               "audio-stop"))
    assert got[0].type == "audio-start" and _audio_s(got) > 0.5
    [err] = asyncio.run(exchange(uri, [Synthesize(text="Hi.", voice=SynthesizeVoice(name="amy")).event()], "error"))
    assert "piper, espeak" in Error.from_event(err).text


def test_a_long_request_does_not_hold_the_voice_from_another_client(uri):
    """Client A asks for many sentences; client B's "Hi." is said in about its own time, not after A's."""
    long_text = " ".join(f"This is sentence number {n} of a long story about the garden." for n in range(12))

    async def timed(text: str, delay: float) -> float:
        await asyncio.sleep(delay)
        start = time.monotonic()
        async with AsyncTcpClient.from_uri(uri) as client:
            await client.write_event(Synthesize(text=text).event())
            while (e := await asyncio.wait_for(client.read_event(), 120)).type != "audio-stop":
                assert e.type != "error", Error.from_event(e).text
        return time.monotonic() - start

    async def run() -> tuple[float, float, float]:
        alone = await timed("Hi.", 0)
        long_s, short_s = await asyncio.gather(timed(long_text, 0), timed("Hi.", 0.3))
        return alone, long_s, short_s
    alone, long_s, short_s = asyncio.run(run())
    assert short_s < long_s / 3, (alone, long_s, short_s)
    assert short_s < alone + 3 * (long_s / 12) + 1.0  # its own time plus at most a sentence or so of A's


def test_text_over_the_cap_is_refused_in_one_sentence(uri):
    [err] = asyncio.run(exchange(uri, [Synthesize(text="word " * (MAX_TEXT // 4)).event()], "error"))
    assert f"at most {MAX_TEXT}" in Error.from_event(err).text


MALFORMED = {
    "not JSON": b"{this is not json\n",
    "not an object": b"[1, 2, 3]\n",
    "no type": b'{"data": {}}\n',
    "a huge payload": json.dumps({"type": "audio-chunk", "payload_length": 2 ** 40}).encode() + b"\n",
    "a negative payload": json.dumps({"type": "audio-chunk", "payload_length": -5}).encode() + b"\n",
    "a header line over 64 KiB": b'{"type": "describe", "pad": "' + b"x" * 70000 + b'"}\n',
}


@pytest.mark.parametrize("what", MALFORMED)
def test_a_malformed_event_gets_an_error_event_a_log_line_and_no_traceback(uri, what, caplog):
    host, port = uri.removeprefix("tcp://").split(":")

    async def run() -> bytes:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(MALFORMED[what])
        await writer.drain()
        got = await asyncio.wait_for(reader.read(), 30)  # the server answers, then closes
        writer.close()
        return got
    with caplog.at_level(logging.WARNING):
        got = asyncio.run(run())
    header = json.loads(got.split(b"\n", 1)[0])
    assert header["type"] == "error", got[:200]
    assert any("refused" in r.getMessage() for r in caplog.records)
    assert not any(r.exc_info for r in caplog.records)
    # and the server still serves everyone else
    assert asyncio.run(exchange(uri, [Describe().event()], "info"))[0].type == "info"


def test_the_state_folder_is_never_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert state_dir(None) == tmp_path / "venus-edge" / "wyoming"
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/venus-edge")  # what systemd's StateDirectory= sets
    assert state_dir(None).as_posix() == "/var/lib/venus-edge/wyoming"
    assert state_dir("/srv/w").as_posix() == "/srv/w"


def test_transcripts_are_handled_by_default_with_the_voice_sessions_harness(tmp_path):
    """No --harness: the server answers transcripts as a voice session would (its built-in tools, the embedded
    chat model), keeps its work under --state, and Describe lists asr, tts and handle; --no-handle turns it off."""
    from wyoming.asr import Transcript
    from wyoming.handle import Handled

    from edge.wyoming.converse import Conversation
    from edge.wyoming.serve import harness_config, parser

    assert harness_config(parser().parse_args(["--no-handle"])) is None
    cfg = harness_config(parser().parse_args(["--state", str(tmp_path / "w")]))
    assert cfg["chat"] == "embedded" and cfg["dir"] == str(tmp_path / "w")
    conversation = Conversation(cfg)
    try:
        server = running(Models(Transcriber(1, "tiny.en"), installed_voices(1), conversation))
        uri = next(server)
        info = Info.from_event(asyncio.run(exchange(uri, [Describe().event()], "info"))[0])
        assert info.asr and info.tts and info.handle
        got = asyncio.run(exchange(uri, [Transcript(text="What is seven times six?").event()], "handled"))
        assert "42" in Handled.from_event(got[-1]).text
        next(server, None)
    finally:
        conversation.close()
    assert (tmp_path / "w" / "work.sqlite").is_file()
