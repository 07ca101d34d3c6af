"""--context and --kv-type reach llama.cpp: the context it makes, and the bytes its KV cache holds per token."""
from __future__ import annotations

import numpy as np
import pytest

from edge.backends.llama import LlamaError, LlamaModel
from edge.bundle.reader import open_bundle
from edge.bundle.settings import VenusSettings
from edge.cli import session_parser


def kv_bytes(model: LlamaModel, rows: int = 64) -> int:
    """What llama.cpp serialises for the sequence after `rows` positions: mostly the KV cache."""
    model.prefill_embeddings(np.random.default_rng(0).standard_normal((rows, model.n_embd)).astype(np.float32))
    return int(model.ll.llama_state_seq_get_size(model.ctx, 0))


def test_the_flags_become_the_frontends_settings(audio_bundle) -> None:
    a = session_parser().parse_args(["--context", "2048", "--kv-type", "q8_0", "--video-fps", "0.5"])
    config = {"context": a.context, "kv_type": a.kv_type, "video_fps": a.video_fps}
    s = VenusSettings.load(audio_bundle, config)
    assert (s.n_ctx, s.kv_type) == (2048, "q8_0")
    assert (s.kv_high, s.kv_low) == (2000, 1500)  # the slide marks keep their share of the context
    assert (VenusSettings.load(audio_bundle, {}).n_ctx, VenusSettings.load(audio_bundle, {}).kv_type) == (8192, "f16")
    with pytest.raises(SystemExit):
        session_parser().parse_args(["--kv-type", "q5_1"])


def test_a_quantized_kv_cache_reaches_llama_cpp(audio_bundle) -> None:
    gguf = open_bundle(audio_bundle).llm
    sizes = {}
    for kv in ("f16", "q8_0", "q4_0"):
        model = LlamaModel(gguf, 2048, 1, kv_type=kv)
        try:
            assert (model.n_ctx, model.kv_type) == (2048, kv)
            sizes[kv] = kv_bytes(model)
            model.remove(4, 20)  # the KV window still slides over a quantized cache
            assert model.n_past == 48
        finally:
            model.close()
    # q8_0 stores 34 bytes per 32 values against f16's 64; q4_0 18
    assert 0.45 < sizes["q8_0"] / sizes["f16"] < 0.6 and 0.2 < sizes["q4_0"] / sizes["f16"] < 0.35
    with pytest.raises(LlamaError, match="must be one of f16, q8_0, q4_0"):
        LlamaModel(gguf, 256, 1, kv_type="q5_1")
