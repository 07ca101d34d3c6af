"""Compacting the KV cache after a slide moves cells, never what the model computes."""
from __future__ import annotations

import numpy as np

from edge.backends.llama import LlamaModel
from edge.bundle.reader import open_bundle
from edge.bundle.settings import VenusSettings
from edge.frontend.venus.kv_window import KVWindow


def _slid(gguf, compact: bool) -> tuple[list[np.ndarray], int]:
    """300 tokens, a slide that keeps the first 10 and drops the next 140, one chunk, then (maybe) compaction
    and 6 decodes: the logits of each decode."""
    rng = np.random.default_rng(3)
    model = LlamaModel(gguf, 512, 1)
    try:
        vocab = model.n_vocab
        model.prefill_tokens([int(t) for t in rng.integers(10, vocab - 10, 300)])
        window = KVWindow(model, high=320, low=170, compact_mb=256 if compact else 0)
        window.keep = 10
        for start in range(10, 300, 20):
            window.units.append(start)
        window.make_room(40)
        assert window.slides == 1 and model.n_past <= 170
        logits = model.prefill_tokens([int(t) for t in rng.integers(10, vocab - 10, 20)])  # applies the shift
        window.note()
        out, tok = [], int(np.argmax(logits))
        for _ in range(6):
            logits, _ = model.step(tok)
            out.append(logits.copy())
            tok = int(np.argmax(logits))
        return out, model.n_past
    finally:
        model.close()


def test_a_compacted_cache_decodes_what_the_holed_one_does(audio_bundle):
    gguf = open_bundle(audio_bundle).llm
    holed, n_holed = _slid(gguf, compact=False)
    packed, n_packed = _slid(gguf, compact=True)
    assert n_packed == n_holed
    for a, b in zip(holed, packed):
        assert int(np.argmax(a)) == int(np.argmax(b))
        np.testing.assert_allclose(a, b, atol=2e-3 * max(1.0, float(np.abs(a).max())))


def test_compaction_is_skipped_when_the_copy_would_pass_its_budget(audio_bundle):
    model = LlamaModel(open_bundle(audio_bundle).llm, 512, 1)
    try:
        model.prefill_tokens(list(range(10, 110)))
        assert model.compact(1) is False  # 100 positions of keys and values are more than a byte
        assert model.compact(1 << 30) is True
        assert model.n_past == 100
    finally:
        model.close()
    assert VenusSettings().kv_compact_mb > 0  # on by default
    assert VenusSettings.from_dict({"kv_compact_mb": 0}).kv_compact_mb == 0
