"""KV sliding over 1,000 chunks, and streaming audio encoding against whole-input encoding."""
from __future__ import annotations

import dataclasses

import numpy as np
import torch

from edge.frontend.venus.chunk_loop import ChunkLoop
from edge.frontend.venus.encoders import AudioEncoder, block_log_mel
from edge.backends.llama import LlamaModel
from edge.backends.onnx import OnnxGraph
from edge.bundle.reader import open_bundle
from edge.bundle.settings import VenusSettings
from kernels.logmel import log_mel

from venus_support import speechy


def cache_positions(llm: LlamaModel) -> tuple[int, int]:
    """The lowest and highest position llama.cpp's KV cache holds for the one sequence."""
    return int(llm.ll.llama_memory_seq_pos_min(llm.mem, 0)), int(llm.ll.llama_memory_seq_pos_max(llm.mem, 0))


def test_kv_window_stays_under_its_high_mark_over_1000_chunks(audio_bundle):
    s = VenusSettings.from_dict({"n_ctx": 512, "kv_high": 300, "kv_low": 200, "threads": 1,
                                 "system_prompt": "<|im_start|>system\nYou are Venus.<|im_end|>\n",
                                 "forced": {"*": ["<|listen|>"], **{str(k): ["<|speak|>", "ok then", "<|turn_eos|>"]
                                                                     for k in range(0, 1000, 7)}}})
    b = open_bundle(audio_bundle)
    llm = LlamaModel(b.llm, s.n_ctx, 1)
    try:
        loop = ChunkLoop(llm, s)
        keep = loop.kv.keep
        assert keep > 0
        rng = np.random.default_rng(0)
        emb = rng.standard_normal((10, llm.n_embd)).astype(np.float32) * 0.1
        highest, spoke = 0, 0
        for k in range(1000):
            res = loop.run(k, k * 10**9, [("audio", emb)])
            spoke += res.control == "speak"
            highest = max(highest, llm.n_past)
            assert llm.n_past == cache_positions(llm)[1] + 1  # positions stay contiguous after every slide
        assert highest <= s.kv_high and loop.kv.max_seen <= s.kv_high
        assert loop.kv.slides >= 50 and spoke == len(range(0, 1000, 7))
        # The system prompt is never slid out: the cache still starts at position 0 with it.
        assert loop.kv.keep == keep and cache_positions(llm)[0] == 0 and loop.kv.units[0] >= keep
    finally:
        llm.close()


def test_chunked_audio_encoding_equals_whole_input_encoding(audio_bundle):
    from export.checkpoint import CheckpointReader
    from export.torch_ref.audio import AudioEncoder as TorchAudio

    b = open_bundle(audio_bundle)
    graph = OnnxGraph(b.graphs["audio"], "cpu", 1)
    enc = AudioEncoder(graph, graph.input_shapes, b.runtime.audio)
    audio = speechy(4.0, seed=3)
    chunks = [audio[i * 16000:(i + 1) * 16000] for i in range(4)]
    streamed = np.concatenate([enc.encode(c) for c in chunks])
    assert streamed.shape[0] == 40  # 10 embeddings per second
    reader = CheckpointReader(b.root.parent / "ckpt-audio")
    ref = TorchAudio(reader.config).load(reader.get)
    mels = [block_log_mel(c, chunks[i - 1] if i else None) for i, c in enumerate(chunks)]
    with torch.no_grad():  # whole input at once: block-causal attention (causal across chunks)
        whole = ref.encode_blockwise([torch.from_numpy(m)[None] for m in mels])[0].numpy()
    np.testing.assert_allclose(streamed, whole, rtol=1e-4, atol=1e-4)


def test_block_log_mel_is_the_whisper_log_mel_of_the_continuous_signal():
    audio = speechy(2.0, seed=5)
    first, second = audio[:16000], audio[16000:]
    np.testing.assert_allclose(block_log_mel(first, None), log_mel(first), atol=1e-5)
    # With the previous block as left context the frames are those of the signal read straight through
    # (all but the last two, which reach past the block's end and use reflect padding there).
    through = log_mel(audio)[:, 100:198]
    got = block_log_mel(second, first)[:, :98]
    floor = max(got.min(), through.min())  # each block floors 8 below its own maximum
    np.testing.assert_allclose(np.maximum(got, floor), np.maximum(through, floor), atol=1e-4)


def test_audio_cache_resets_before_the_position_table_ends(audio_bundle):
    b = open_bundle(audio_bundle)
    graph = OnnxGraph(b.graphs["audio"], "cpu", 1)
    facts = dataclasses.replace(b.runtime.audio, max_positions=120)  # 50 positions a block: reset every 2
    enc = AudioEncoder(graph, graph.input_shapes, facts)
    mel = log_mel(speechy(1.0))
    for _ in range(5):
        enc.encode_mel(mel)
        assert enc.past.shape[4] <= 120
    assert enc.resets == 2
    stream = AudioEncoder(graph, graph.input_shapes, facts)
    for piece in np.array_split(speechy(5.0), 13):  # blocks cut across calls reset the same way
        stream.encode(piece)
        assert stream.past.shape[4] <= 120
    assert stream.resets == 2
