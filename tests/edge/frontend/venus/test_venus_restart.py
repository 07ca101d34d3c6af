"""A Venus frontend that restarts goes on with the same conversation, and no chunk goes undecided.

The frontend keeps its context (every KV position: token ids, and the audio
rows in a file) and the chunk loop's state at each checkpoint; capture keeps
the chunks it has not seen decided. Here the frontend node is killed with
SIGKILL in the middle of a spoken turn of a bundle exactly as the exporter
writes it.
"""
from __future__ import annotations


import numpy as np
import soundfile as sf

from edge import messages as m
from edge.bundle.settings import VenusSettings
from edge.frontend.base import Chunk
from edge.frontend.venus import context_log
from edge.frontend.venus.frontend import VenusFrontend
from edge.session import ALL_NODES, SessionConfig, make_supervisor, run_session
from edge.timeline.journal import Journal

from kill_midway import kill_once
from venus_support import BASE, speechy

NS = 1_000_000_000
# Listens, speaks a turn of one chunk, listens, then a turn over three chunks (the kill lands inside it).
FORCED = {"1": ["<|speak|>", "Hello there", "<|turn_eos|>"], "5": ["<|speak|>", "one two", "<|chunk_eos|>"],
          "6": ["three four", "<|chunk_eos|>"], "7": ["five six", "<|turn_eos|>"], "*": ["<|listen|>"]}


def test_a_restarted_frontend_prefills_the_same_context_and_decides_as_before(tmp_path, exported_audio_bundle):
    settings = {**BASE, "forced": FORCED}
    first = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict(settings))
    again = None
    try:
        assert first.resume(tmp_path, {}) == {}
        for k in range(6):  # into the second turn: the model is mid-turn when the checkpoint is taken
            first.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))
            state = first.checkpoint()
        assert first.loop.in_turn
        again = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict(settings))
        rebuilt = again.resume(tmp_path, state)
        assert rebuilt["n_past"] == first.llm.n_past == rebuilt["prefilled"] and rebuilt["in_turn"]
        assert next_token_kl(first, again) < 1e-4  # the same context: float16 rounding of its rows only
        for k in (6, 7, 8):  # and both go on alike: the turn continues, then ends
            a = first.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))
            b = again.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))
            assert (a.control, a.text, a.tokens, a.turn_end) == (b.control, b.text, b.tokens, b.turn_end)
            assert first.llm.n_past == again.llm.n_past
        assert b.turn_end is False and a.control == "listen"
    finally:
        first.close()
        if again is not None:
            again.close()


def next_token_kl(first: VenusFrontend, again: VenusFrontend) -> float:
    """How far apart the two caches read the token after one more `<unit>`: KL divergence in nats (the same
    most likely token is required)."""
    probe = first.loop.ids["<unit>"]
    want = first.llm.prefill_tokens([probe]).astype(np.float64)
    got = again.llm.prefill_tokens([probe]).astype(np.float64)
    first.llm.truncate(first.llm.n_past - 1)
    again.llm.truncate(again.llm.n_past - 1)
    assert np.argmax(got) == np.argmax(want)
    p, q = (np.exp(x - x.max()) / np.exp(x - x.max()).sum() for x in (want, got))
    return float(np.sum(p * (np.log(p) - np.log(q))))


def test_the_kept_context_follows_the_sliding_window_and_sheds_dropped_rows(tmp_path, exported_audio_bundle,
                                                                          monkeypatch):
    monkeypatch.setattr(context_log, "MIN_COMPACT_ROWS", 64)  # rewrite the row file within a short test
    settings = {**BASE, "forced": {"*": ["<|listen|>"]}}
    first = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict(settings))
    again = None
    try:
        first.resume(tmp_path, {})
        for k in range(80):
            first.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k % 7)))
            state = first.checkpoint()
        assert first.loop.kv.slides >= 2 and state["context"]["version"] >= 1  # slid, and the rows were rewritten
        state = first.checkpoint()  # the step file naming the new row file is written: the old file goes
        [rows] = list(tmp_path.glob("context-rows-*.f16"))
        kept, live = state["context"]["rows"], sum(1 for e in first.context.entries if e < 0)
        assert rows.stat().st_size == kept * first.llm.n_embd * 2
        assert kept < 80 * 11 and kept - live <= max(live // 2, 64)  # what the window dropped is shed, in bulk
        again = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict(settings))
        again.resume(tmp_path, state)
        assert again.llm.n_past == first.llm.n_past and list(again.loop.kv.units) == list(first.loop.kv.units)
        # Close, not equal: the keys of what stayed had been computed with the dropped units still there.
        assert next_token_kl(first, again) < 0.05
    finally:
        first.close()
        if again is not None:
            again.close()


def session_config(tmp_path, bundle, mic, name: str, realtime: bool) -> SessionConfig:
    return SessionConfig(mic=str(mic), speaker="null", journal=str(tmp_path / f"{name}.journal"),
                         frontend=f"bundle:{bundle}", voice="null", realtime=realtime,
                         extra={"venus": {**BASE, "forced": FORCED}})


def decisions(journal: Journal) -> list[m.ChunkDecision]:
    return [d for _, d in journal.messages(m.ChunkDecision)]


def test_killing_the_frontend_mid_turn_loses_no_chunk_and_keeps_the_context(tmp_path, exported_audio_bundle):
    mic = tmp_path / "mic.wav"
    sf.write(mic, 1e-4 * np.random.default_rng(0).standard_normal(16000 * 12).astype(np.float32), 16000)
    # What the session decides when nothing goes wrong (the virtual clock: as fast as the graph allows).
    reference = run_session(session_config(tmp_path, exported_audio_bundle, mic, "reference", realtime=False))
    assert reference.ok, reference.reason
    n_past = {d.index: d.info["n_past"] for d in decisions(Journal(tmp_path / "reference.journal"))}
    assert sorted(n_past) == list(range(12))

    sup = make_supervisor(session_config(tmp_path, exported_audio_bundle, mic, "killed", realtime=True), ALL_NODES)
    kill_once(sup, "frontend", lambda: sup.children["frontend"].restore.get("next_index", 0) >= 6,  # chunk 5: mid-turn
              "the session never got going", wait_s=120, join_s=180, pause_s=0.3)  # the next chunk being captured

    journal = Journal(tmp_path / "killed.journal")
    got = decisions(journal)
    indexes = [d.index for d in got]
    assert sorted(set(indexes)) == list(range(12)), indexes  # every chunk got a decision
    assert len(indexes) - len(set(indexes)) <= 1  # at most the one decided just before the kill, decided again
    assert [r.index for _, r in journal.messages(m.ResentChunk)], "no chunk was in flight: the kill came too late"
    # The context survived: the same KV positions after every chunk as in the session nobody killed.
    assert {d.index: d.info["n_past"] for d in got} == n_past
    [restored] = [d for d in got if "restored" in d.info]
    before = max(d.info["n_past"] for d in got if d.index < restored.index)
    assert restored.info["restored"]["n_past"] == before
    # The turn open at the kill went on after it, as one utterance.
    spoken = [s for _, s in journal.messages(m.SpeakText)]
    turn = [s for s in spoken if s.index in (5, 6, 7)]
    assert [s.text for s in turn] == ["one two", "three four", "five six"]
    assert len({s.utterance for s in turn}) == 1
