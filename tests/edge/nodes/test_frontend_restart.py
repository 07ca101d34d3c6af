"""A frontend restart: the chunks it had not decided come back from capture, the conversation from its files.

The Venus bundle's side (its KV context) is tested in tests/edge/frontend/venus/test_venus_restart.py; here the embedded
default's chat history, capture's ring, and the node's step files.
"""
from __future__ import annotations


import msgpack
import numpy as np
import pytest

from edge import messages as m
from edge.bench import spoken
from edge.frontend.base import Chunk, ResultToSay
from edge.nodes.capture_ring import KEEP_DECIDED, ChunkRing
from edge.nodes.frontend_state import StepFiles
from edge.session import ALL_NODES, SessionConfig, make_supervisor
from edge.timeline.journal import Journal

from kill_midway import kill_once

NS = 1_000_000_000


def chunk(k: int) -> m.AudioChunk:
    return m.AudioChunk(k, k * NS, (k + 1) * NS, 16000, 16000)


def test_capture_keeps_what_is_undecided_and_sends_it_again_in_order():
    ring = ChunkRing(capacity=6)
    for k in range(4):
        ring.add(chunk(k), bytes([k]), None)
    ring.on_decided(2)
    # Chunk 3 is undecided; the last decided ones stay too, in case their checkpoint was lost in the crash.
    assert [k.chunk.index for k in ring.since(0)] == list(range(3 - KEEP_DECIDED, 4))
    assert [(k.chunk.index, k.pcm) for k in ring.since(3)] == [(3, b"\x03")]
    assert not ring.full(4)
    for k in range(4, 7):
        ring.add(chunk(k), bytes([k]), None)
    assert ring.full(7)  # one more would push out an undecided chunk: on the virtual clock capture waits
    ring.add(chunk(7), b"", None)  # live, the microphone cannot wait: the oldest goes, and is counted
    assert ring.dropped == 0 and ring.since(3)[0].chunk.index == 3  # so far only decided ones went
    ring.add(chunk(8), b"", None)
    ring.add(chunk(9), b"", None)
    assert ring.dropped == 1 and ring.since(0)[0].chunk.index == 4


def test_a_graph_without_a_frontend_never_holds_capture_up():
    ring = ChunkRing(capacity=4)
    for k in range(10):
        ring.add(chunk(k), b"", None)
    assert not ring.full(10)


def test_a_restart_reads_the_newest_whole_step_file(tmp_path):
    files = StepFiles(tmp_path)
    for gen in (1, 2, 3):
        files.write(gen, {"node": {"next_index": gen}, "outbox": [["id", [b"topic", b"\x00\xff"]]]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-2.msgpack", "step-3.msgpack"]
    (tmp_path / ".step-4.tmp").write_bytes(b"\x85half")  # a write the kill interrupted: never renamed
    gen, state = files.newest()
    assert gen == 3 and state["node"]["next_index"] == 3 and state["outbox"] == [["id", [b"topic", b"\x00\xff"]]]
    (tmp_path / "step-3.msgpack").write_bytes(b"\xc1")  # unreadable: the one before it is taken
    assert files.newest()[0] == 2


@pytest.fixture(scope="module")
def question(tmp_path_factory):
    audio, _ = spoken.timeline([(0.3, "What is two plus two?")], 9.0)
    return spoken.write(tmp_path_factory.mktemp("question") / "q.wav", audio)


def test_the_embedded_default_gets_its_history_back_and_prefills_it(tmp_path, question):
    import soundfile as sf
    from edge.frontend.default.build import build

    audio, _ = sf.read(question, dtype="float32")
    first = build({"threads": 1, "realtime": False})
    again = None
    try:
        first.resume(tmp_path, {})
        for k in range(4):
            first.step(Chunk(k, k * NS, (k + 1) * NS, audio[k * 16000:(k + 1) * 16000]))
        # The sum goes to the harness by rule; its answer, once spoken, is the assistant's turn.
        first.deliver(ResultToSay("r1", "2 plus 2 is 4."))
        for k in range(4, 7):
            first.step(Chunk(k, k * NS, (k + 1) * NS, np.zeros(16000, np.float32)))
        assert first.history[1:] == [("assistant", "2 plus 2 is 4.")], first.history
        state = msgpack.unpackb(msgpack.packb(first.checkpoint(), use_bin_type=True), raw=False)  # as stored
        again = build({"threads": 1, "realtime": False})
        rebuilt = again.resume(tmp_path, state)
        assert again.history == first.history and rebuilt["history_turns"] == 2
        assert "plus" in rebuilt["last_user"]
        # The prompt cache holds the same conversation, ready for the next question.
        a, b = first.llm.llm, again.llm.llm
        assert list(b.input_ids[:b.n_tokens]) == list(a.input_ids[:a.n_tokens])
    finally:
        first.close()
        if again is not None:
            again.close()


def test_killing_the_embedded_default_mid_session_loses_no_chunk_and_no_turn(tmp_path, question):
    # answer_wait_s=0: the file's nine chunks are the session (the answer's delivery, confirmed by the restarted
    # frontend, would otherwise keep it listening a while longer).
    cfg = SessionConfig(mic=str(question), speaker="null", journal=str(tmp_path / "s.journal"), frontend="default",
                        voice="null", realtime=False, answer_wait_s=0.0)
    sup = make_supervisor(cfg, ALL_NODES)
    kill_once(sup, "frontend", lambda: sup.children["frontend"].restore.get("utterance", 0) >= 1,  # the answer begun
              "the frontend never answered", wait_s=300, join_s=300)
    journal = Journal(tmp_path / "s.journal")
    decided = [d for _, d in journal.messages(m.ChunkDecision)]
    assert sorted({d.index for d in decided}) == list(range(9))
    [back] = [d for d in decided if "restored" in d.info]
    rebuilt = back.info["restored"]
    assert rebuilt["next_index"] == back.index and back.index > 1
    assert rebuilt["history_turns"] >= 2 and "plus" in rebuilt["last_user"]  # the question and the answer begun
