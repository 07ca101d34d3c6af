"""The GGUFs in llama.cpp: loading, generation, control tokens, parity with the torch reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer

from edge.backends.llama import LlamaModel
from edge.protocol.tokens import PROTOCOL_TOKENS
from export.checkpoint import CheckpointReader
from export.llm_reference import compare_logits, qwen3_logits, tts_logits
from export.special_tokens import MINICPMO_SPECIALS
from export.transforms import fold_weight_norm

TEXT = "Hello world, check the weather for today. Call my friend at 1234!"


def gguf(path: Path, **kw) -> LlamaModel:
    return LlamaModel(path, 256, 1, **kw)


def logits(m: LlamaModel, rows) -> np.ndarray:
    """Logits after every token (or embedding row) of a fresh sequence."""
    m.clear()
    return m.logits_all(rows)


def greedy(m: LlamaModel, prompt: list[int], n: int) -> list[int]:
    m.clear()
    last, out = m.prefill_tokens(prompt), []
    for _ in range(n):
        out.append(int(np.argmax(last)))
        last, _ = m.step(out[-1])
    return out


@pytest.fixture(scope="module")
def llm(audio_bundle: Path):
    with gguf(audio_bundle / "llm" / "llm-F16.gguf") as m:
        yield m


def test_llm_generates(llm: LlamaModel):
    prompt = llm.tokenize(TEXT)
    out = greedy(llm, prompt, 8)
    assert len(out) == 8 and all(0 <= t < llm.n_vocab for t in out)
    assert greedy(llm, prompt, 8) == out  # greedy decoding after a cache reset is deterministic


def test_protocol_tokens_are_control_tokens(llm: LlamaModel, tiny_audio: Path):
    hf = Tokenizer.from_file(str(tiny_audio / "tokenizer.json"))
    for tok in PROTOCOL_TOKENS + ("<|im_start|>", "<|im_end|>", "<|tts_bos|>", "<|audio_start|>"):
        ids = llm.tokenize(tok, special=True)
        assert ids == [hf.token_to_id(tok)], tok
        assert len(llm.tokenize(tok)) > 1, tok  # plain text cannot inject the token
    assert set(MINICPMO_SPECIALS) >= {"<|im_start|>", "<|im_end|>"}


def test_tokenization_matches_the_checkpoint_tokenizer(llm: LlamaModel, tiny_audio: Path):
    hf = Tokenizer.from_file(str(tiny_audio / "tokenizer.json"))
    text = f"<|im_start|>user\n{TEXT}<|im_end|>\n<delegate>find it</delegate>"
    assert llm.tokenize(text, special=True) == hf.encode(text, add_special_tokens=False).ids


def test_llm_f16_matches_the_torch_reference(llm: LlamaModel, tiny_audio: Path):
    r = CheckpointReader(tiny_audio)
    ids = llm.tokenize(TEXT)
    cmp = compare_logits(qwen3_logits(r.get, r.config, ids), logits(llm, ids))
    assert cmp["kl"] < 1e-3 and cmp["top1"] >= 0.95, cmp


def test_quantized_outputs_degrade_in_order(audio_bundle: Path, tiny_audio: Path, llm: LlamaModel):
    r = CheckpointReader(tiny_audio)
    ids = llm.tokenize(TEXT + " " + TEXT)
    ref = qwen3_logits(r.get, r.config, ids)
    kl = {}
    for t in ("F16", "Q8_0", "Q4_K_M"):
        with gguf(audio_bundle / "llm" / f"llm-{t}.gguf") as m:
            kl[t] = compare_logits(ref, logits(m, ids))["kl"]
    assert kl["F16"] < kl["Q8_0"] < kl["Q4_K_M"], kl
    sizes = {t: (audio_bundle / "llm" / f"llm-{t}.gguf").stat().st_size for t in kl}
    assert sizes["F16"] > sizes["Q8_0"] > sizes["Q4_K_M"], sizes


def test_tts_loads_generates_and_matches_torch(omni_bundle: Path, tiny_omni: Path):
    r = CheckpointReader(tiny_omni)
    codes = [int(c) for c in np.random.default_rng(3).integers(0, 6562, 20)]
    with gguf(omni_bundle / "tts" / "tts-F16.gguf", has_vocab=False) as m:
        assert m.n_vocab == r.config["tts_config"]["num_audio_tokens"]
        cmp = compare_logits(tts_logits(r.get, r.config, codes), logits(m, codes))
        out = greedy(m, codes[:4], 6)
        # embedding input: the code-embedding rows fed as embeddings give the same logits as the ids
        emb = r.get("tts.emb_code.0.weight")[codes[:4]]
        by_embd = logits(m, emb)
        by_ids = logits(m, codes[:4])
    assert cmp["kl"] < 1e-3 and cmp["top1"] >= 0.95, cmp
    assert len(out) == 6 and all(0 <= c < 6562 for c in out)
    assert np.allclose(by_embd, by_ids, atol=1e-2)


def test_tts_extras_hold_text_embedding_and_projectors(omni_bundle: Path, tiny_omni: Path):
    r = CheckpointReader(tiny_omni)
    extras = np.load(omni_bundle / "tts" / "tts-extras.npz")
    projectors = {f"projector_{p}.linear{i}.{k}" for p in ("spk", "semantic")
                  for i in (1, 2) for k in ("weight", "bias")}
    assert set(extras.files) == {"emb_text.weight", "emb_code.0.weight"} | projectors
    np.testing.assert_allclose(extras["emb_text.weight"], r.get("tts.emb_text.weight"), rtol=1e-3, atol=1e-3)


def test_weight_norm_fold_matches_torch():
    g = torch.rand(7, 1) + 0.5
    v = torch.randn(7, 5)
    want = torch._weight_norm(v, g, 0).numpy()
    np.testing.assert_allclose(fold_weight_norm(g.numpy(), v.numpy()), want, rtol=1e-6)


@pytest.mark.parametrize("gguf_type", ["Q6_K", "Q5_K_M", "IQ4_XS"])
def test_other_llama_cpp_types_quantize_load_and_stay_close(gguf_type, audio_bundle: Path, tiny_audio: Path,
                                                            tmp_path: Path):
    from export.quantize import quantize
    from export.verify import limits

    out = tmp_path / f"llm-{gguf_type}.gguf"
    quantize(audio_bundle / "llm" / "llm-F16.gguf", out, gguf_type, nthread=1)
    r = CheckpointReader(tiny_audio)
    with gguf(out) as m:
        ids = m.tokenize(TEXT)
        cmp = compare_logits(qwen3_logits(r.get, r.config, ids), logits(m, ids))
    assert cmp["kl"] < limits(gguf_type)[0], cmp


def test_tied_embeddings_export_without_a_head(tiny_audio: Path, tmp_path: Path):
    import json
    import shutil

    from safetensors.torch import load_file, save_file

    from export.llm_gguf import convert_llm

    ckpt = shutil.copytree(tiny_audio, tmp_path / "c")
    index = json.loads((ckpt / "model.safetensors.index.json").read_text())
    shard = index["weight_map"].pop("llm.lm_head.weight")
    tensors = load_file(str(ckpt / shard))
    del tensors["llm.lm_head.weight"]
    save_file(tensors, str(ckpt / shard))
    (ckpt / "model.safetensors.index.json").write_text(json.dumps(index))
    config = json.loads((ckpt / "config.json").read_text())
    (ckpt / "config.json").write_text(json.dumps({**config, "tie_word_embeddings": True}))
    r = CheckpointReader(ckpt)
    convert_llm(r, tmp_path / "tied.gguf", progress=False)
    with gguf(tmp_path / "tied.gguf") as m:
        ids = m.tokenize(TEXT)
        cmp = compare_logits(qwen3_logits(r.get, r.config, ids), logits(m, ids))
    assert cmp["kl"] < 1e-3 and cmp["top1"] >= 0.95, cmp
