"""The importance matrix collected through llama.cpp's callback, checked against NumPy, and used to quantize."""
from __future__ import annotations

import numpy as np
import pytest
from gguf import GGUFReader

from edge.backends.llama import LlamaModel, LlamaVocab
from export.errors import ExportError
from export.gguf_types import gguf_type
from export.quantize import quantize
from quant.imatrix import compute_imatrix, load_imatrix, save_imatrix
from quant.texts import CALIB_TEXT


@pytest.fixture(scope="module")
def imatrix(tiny_gguf):
    return compute_imatrix(tiny_gguf, CALIB_TEXT, chunk=64, max_tokens=256)


def test_every_layer_weight_is_collected(imatrix):
    names = {f"blk.{i}.{w}.weight" for i in range(2)
             for w in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")}
    assert set(imatrix) == names
    assert imatrix["blk.0.attn_q.weight"].shape == (256,) and imatrix["blk.1.ffn_down.weight"].shape == (768,)
    assert all(np.all(v > 0) and np.all(np.isfinite(v)) for v in imatrix.values())


def test_first_layer_matches_numpy(tiny_gguf, imatrix):
    # Layer 0's attention input is RMSNorm(token embeddings) * attn_norm: computable without llama.cpp.
    t = {x.name: np.asarray(x.data) for x in GGUFReader(str(tiny_gguf)).tensors}
    with LlamaVocab(tiny_gguf) as v:
        tokens = v.tokenize(CALIB_TEXT)[:256]
    x = t["token_embd.weight"].astype(np.float64)[tokens]
    x = x / np.sqrt(np.mean(x**2, axis=1, keepdims=True) + 1e-5) * t["blk.0.attn_norm.weight"]
    want = np.mean(x**2, axis=0)
    assert np.allclose(imatrix["blk.0.attn_q.weight"], want, rtol=2e-3)
    assert np.allclose(imatrix["blk.0.attn_k.weight"], want, rtol=2e-3)


def test_imatrix_enables_types_that_need_it(tiny_gguf, imatrix, tmp_path):
    t = gguf_type("IQ2_XXS")
    with pytest.raises(ExportError, match="needs an importance matrix"):
        quantize(tiny_gguf, tmp_path / "a.gguf", t)
    out = quantize(tiny_gguf, tmp_path / "b.gguf", t, imatrix=imatrix)
    assert out.stat().st_size < tiny_gguf.stat().st_size / 4
    with LlamaModel(out, 256) as m:
        assert np.isfinite(m.prefill_tokens(m.tokenize("hello there"))).all()
    assert not list(tmp_path.glob("*.partial")) and not (tmp_path / "a.gguf").exists()


def test_npz_round_trip(imatrix, tmp_path):
    save_imatrix(tmp_path / "m.npz", imatrix)
    back = load_imatrix(tmp_path / "m.npz")
    assert set(back) == set(imatrix) and all(np.array_equal(back[k], imatrix[k]) for k in imatrix)
    with pytest.raises(ValueError, match=r"\.npz"):
        (tmp_path / "m.txt").write_text("x")
        load_imatrix(tmp_path / "m.txt")
