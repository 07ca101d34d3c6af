"""The streaming audio encoder over chunks shorter than its 1 s block (`--chunk-ms 500` with a bundle).

Tolerances (tiny exported Audio bundle, fp32 graph on onnxruntime CPU):
- the second half of a second fed as two halves, and everything after it, equals the whole second fed at
  once to 1e-5 (it is the same block through the same graph over the same cache);
- the first half's five embeddings are made before the second half exists (bidirectional attention inside
  a block cannot see it), so they only approximate the whole second's: cosine >= 0.9 each (measured
  0.94-0.98 on this random model).
"""
from __future__ import annotations

import numpy as np
import pytest

from edge.backends.onnx import OnnxGraph
from edge.bundle.reader import open_bundle
from edge.bundle.settings import VenusSettings
from edge.frontend.base import Chunk
from edge.frontend.venus.encoders import AudioEncoder
from edge.frontend.venus.frontend import VenusFrontend

from venus_support import BASE, speechy

SECOND = 16000


@pytest.fixture(scope="module")
def encoders(exported_audio_bundle):
    b = open_bundle(exported_audio_bundle)
    graph = OnnxGraph(b.graphs["audio"], "cpu", 1)
    return lambda: AudioEncoder(graph, graph.input_shapes, b.runtime.audio)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_a_second_fed_as_two_halves_ends_where_the_whole_second_does(encoders):
    audio = speechy(3.0, seed=3)
    whole, halves = encoders(), encoders()
    for k in range(3):
        w = whole.encode(audio[k * SECOND:(k + 1) * SECOND])
        first = halves.encode(audio[k * SECOND:k * SECOND + SECOND // 2])
        second = halves.encode(audio[k * SECOND + SECOND // 2:(k + 1) * SECOND])
        assert len(w) == 10 and len(first) == 5 and len(second) == 5  # 10 a second, none padded in
        np.testing.assert_allclose(second, w[5:], atol=1e-5)
        assert cosine(first, w[:5]).min() >= 0.9
        np.testing.assert_allclose(halves.past, whole.past, atol=1e-5)  # the cache carries no trace of the cut


@pytest.mark.parametrize("chunk_ms", [100, 250, 300, 700])
def test_chunks_that_cut_pooled_steps_carry_their_leftover_frames(encoders, chunk_ms):
    audio = speechy(3.0, seed=4)
    ref = encoders()
    whole = np.concatenate([ref.encode(audio[k * SECOND:(k + 1) * SECOND]) for k in range(3)])
    enc = encoders()
    step = chunk_ms * 16
    got = [enc.encode(audio[i:i + step]) for i in range(0, len(audio), step)]
    assert sum(len(g) for g in got) == len(whole) == 30  # every pooled step once, none lost at a cut
    np.testing.assert_allclose(enc.past, ref.past, atol=1e-5)
    # None of these chunk lengths cuts a block in its last 10 ms, so each block's last step comes out
    # when the block is whole, and equals the whole second's.
    flat = np.concatenate(got)
    np.testing.assert_allclose(flat[[9, 19, 29]], whole[[9, 19, 29]], atol=1e-5)


def test_a_half_second_chunk_prefills_half_a_seconds_audio(exported_audio_bundle):
    settings = {**BASE, "forced": {"*": ["<|listen|>"]}}
    half = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict(settings))
    full = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict(settings))
    try:
        audio = speechy(2.0, seed=6)
        for k in range(4):
            out = half.step(Chunk(k, k * 500_000_000, (k + 1) * 500_000_000, audio[k * 8000:(k + 1) * 8000], []))
            assert out.info["prefill"] == 1 + 5  # <unit> and five embeddings: no padded half second of silence
        for k in range(2):
            out = full.step(Chunk(k, k * 10**9, (k + 1) * 10**9, audio[k * SECOND:(k + 1) * SECOND], []))
            assert out.info["prefill"] == 1 + 10
        np.testing.assert_allclose(half.audio.past, full.audio.past, atol=1e-5)
    finally:
        half.close()
        full.close()


def test_a_session_with_half_second_chunks(exported_audio_bundle, tmp_path):
    """`--chunk-ms 500` through the process graph: every chunk prefills half a second, a turn over two chunks
    is spoken whole."""
    import soundfile as sf

    from edge import messages as m
    from edge.session import SessionConfig, run_session
    from edge.timeline.journal import Journal

    wav = tmp_path / "in.wav"
    sf.write(wav, speechy(4.0, seed=8), 16000, subtype="PCM_16")
    forced = {"*": ["<|listen|>"], "2": ["<|speak|>", "one two", "<|chunk_eos|>"], "3": ["three", "<|turn_eos|>"]}
    cfg = SessionConfig(mic=str(wav), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"bundle:{exported_audio_bundle}", voice=f"bundle:{exported_audio_bundle}",
                        chunk_ms=500, realtime=False, extra={"venus": {**BASE, "forced": forced}})
    report = run_session(cfg)
    assert report.ok, report.reason
    journal = Journal(tmp_path / "s.journal")
    decisions = [msg for _, msg in journal.messages(m.ChunkDecision)]
    assert len(decisions) == 8 and all(d.info["prefill"] == 1 + 5 for d in decisions)
    assert [d.control for d in decisions[1:5]] == ["listen", "speak", "speak", "listen"] and decisions[3].turn_end
    out, rate = sf.read(str(tmp_path / "out.wav"), dtype="float32")
    spoken = np.flatnonzero(np.abs(out) > 1e-4)
    assert len(spoken) and spoken[0] >= int(1.5 * rate)  # the words of chunk 2 (1.0-1.5 s) follow it
