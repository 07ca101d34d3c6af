"""Several recorded sessions in one sweep: each replays as it was recorded, from an empty context and cache."""
from __future__ import annotations

import json

import numpy as np

from edge.backends.llama import LlamaModel
from edge.bundle.manifest import MANIFEST
from quant.chunks import ChunkStream, replay, stream_positions
from quant.journal_stream import stream_from_journal, stream_from_journals
from quant.media_stream import embed_media, llm_width


def test_each_session_replays_as_if_it_were_alone(omni_bundle, journal, tmp_path):
    gguf = omni_bundle / "llm" / "llm-F16.gguf"
    one = stream_from_journal(journal)
    two = stream_from_journals([journal, journal])
    n = len(one.chunks)
    assert len(two.chunks) == 2 * n and "2 journals" in two.source
    assert [c.session for c in two.chunks] == [0] * n + [1] * n

    onnx = omni_bundle / "onnx"
    media = [onnx / "audio.fp32.onnx", onnx / "vision.fp32.onnx"]
    runtime = json.loads((omni_bundle / MANIFEST).read_text())["runtime"]
    alone = embed_media(one, llm_width(gguf), *media, runtime)
    both = embed_media(two, llm_width(gguf), *media, runtime)
    assert "media not embedded" not in both.source
    # the second session's audio embeddings are the first's: the streaming cache starts empty again
    for a, b in zip(both.chunks[:n], both.chunks[n:]):
        assert all(np.array_equal(x, y) if not isinstance(x, str) else x == y for x, y in zip(a.inputs, b.inputs))

    # saved and loaded as the sweep's worker reads it, the sessions stay apart
    both.save(tmp_path / "stream.json")
    loaded = ChunkStream.load(tmp_path / "stream.json")
    assert [c.session for c in loaded.chunks] == [c.session for c in both.chunks]

    llm = LlamaModel(gguf, n_ctx=2048)
    try:
        assert stream_positions(llm.tokenize, loaded) == stream_positions(llm.tokenize, alone)
        ref = replay(llm, alone)
        got = replay(llm, loaded)
    finally:
        llm.close()
    assert [d.control for d in got] == [d.control for d in ref] * 2
    assert np.allclose([d.margin for d in got[n:]], [d.margin for d in ref], atol=1e-4)
