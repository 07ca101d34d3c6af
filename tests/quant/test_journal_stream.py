"""Journal -> chunk stream: inputs, rebuilt outputs, harness results, audio and frames, per chunk."""
from __future__ import annotations

import numpy as np
import pytest

import edge.messages as m
from edge.timeline.journal import JournalWriter
from edge.wire import encode
from quant.journal_stream import stream_from_journal

S = 1_000_000_000


def _write(path, messages, session=None):
    w = JournalWriter(path, session or {"frontend": "test"})
    for seq, (msg, payload) in enumerate(messages):
        w.append(seq, encode(msg, seq=seq, epoch=0, t_ns=seq, src="test", payload=payload))
    w.close()


def test_stream_rebuilds_each_chunk(tmp_path):
    pcm = (np.arange(16000) % 200 - 100).astype("<i2")
    frame = np.full((4, 6, 3), 7, np.uint8)
    _write(tmp_path / "j", [
        (m.VideoFrame(0, 100, 6, 4, "rgb24"), [frame.tobytes()]),
        (m.AudioChunk(0, 0, S, 16000, 16000), [pcm.tobytes()]),
        (m.ChunkDecision(0, "listen", user_text="what's the weather"), []),
        (m.AudioChunk(1, S, 2 * S, 16000, 16000), [pcm.tobytes()]),
        (m.ChunkDecision(1, "listen", delegates=1), []),
        (m.DelegateRequest("d1", "Weather in Paris now?", S, 1), []),
        (m.DelegateRequest("d1", "Weather in Paris now?", S, 1), []),  # a re-sent copy is read once
        (m.BackendResult("r1", "w1", "Sunny, 20 degrees."), []),
        (m.BackendResult("r2", "w1", "still working", kind="progress"), []),
        (m.AudioChunk(2, 2 * S, 3 * S, 16000, 16000), [pcm.tobytes()]),
        (m.ChunkDecision(2, "speak", text="It is sunny.", turn_end=True), []),
    ])
    s = stream_from_journal(tmp_path / "j")
    assert s.source == "journal j (3 chunks)"
    c0, c1, c2 = s.chunks
    # the runtime's system prompt first, as the chunk loop prefills it before the first chunk
    assert c0.inputs == ["Streaming Omni Conversation.", "<unit>what's the weather"] and c0.output == "<|listen|>"
    assert c1.output == "<delegate>Weather in Paris now?</delegate><|listen|>"
    assert c2.inputs == ["<backend>Sunny, 20 degrees.</backend>", "<unit>"]  # a progress notice is not a result
    assert c2.output == "<|speak|>It is sunny.<|turn_eos|>" and c2.close == "</unit>"
    assert np.allclose(c0.audio, pcm / 32768.0) and c0.audio.dtype == np.float32
    assert np.array_equal(c0.frame, frame) and c1.frame is None and c2.frame is None


def test_the_sessions_own_system_prompt_is_replayed(tmp_path):
    chunk = [(m.AudioChunk(0, 0, S, 16000, 0), []), (m.ChunkDecision(0, "listen"), [])]
    _write(tmp_path / "j", chunk, {"config": {"venus": {"system_prompt": "Be brief."}}})
    assert stream_from_journal(tmp_path / "j").chunks[0].inputs == ["Be brief.", "<unit>"]
    _write(tmp_path / "k", chunk, {"config": {"venus": {"system_prompt": ""}}})  # a session run without one
    assert stream_from_journal(tmp_path / "k").chunks[0].inputs == ["<unit>"]


def test_journal_without_decisions_is_one_sentence(tmp_path):
    _write(tmp_path / "j", [(m.AudioChunk(0, 0, S, 16000, 0), [])])
    with pytest.raises(ValueError, match="records no chunk decisions"):
        stream_from_journal(tmp_path / "j")
