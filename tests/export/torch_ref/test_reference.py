"""The torch reference forwards against transformers' own Qwen3 and Llama, where transformers is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from export.checkpoint import CheckpointReader
from export.llm_reference import qwen3_logits, tts_logits

transformers = pytest.importorskip("transformers")


def test_qwen3_reference_matches_transformers(tiny_audio: Path):
    r, c = CheckpointReader(tiny_audio), CheckpointReader(tiny_audio).config
    keys = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "head_dim", "rms_norm_eps", "rope_theta", "max_position_embeddings")
    model = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**{k: c[k] for k in keys},
                                                                   tie_word_embeddings=False)).eval()
    model.load_state_dict({k[len("llm."):]: torch.from_numpy(r.get(k)) for k in r.names("llm.")}, strict=True)
    ids = [int(i) for i in np.random.default_rng(0).integers(0, 900, 24)]
    with torch.no_grad():
        want = model(torch.tensor([ids])).logits[0].numpy()
    np.testing.assert_allclose(qwen3_logits(r.get, c, ids), want, atol=1e-4)


def test_tts_reference_matches_transformers(tiny_audio: Path):
    r = CheckpointReader(tiny_audio)
    tc = r.config["tts_config"]
    keys = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
            "rms_norm_eps", "rope_theta", "max_position_embeddings")
    body = transformers.LlamaModel(transformers.LlamaConfig(vocab_size=8, **{k: tc[k] for k in keys})).eval()
    body.load_state_dict({k[len("tts.model."):]: torch.from_numpy(r.get(k)) for k in r.names("tts.model.")},
                         strict=False)
    head = torch.nn.utils.parametrizations.weight_norm(
        torch.nn.Linear(tc["hidden_size"], tc["num_audio_tokens"], bias=False), dim=0)
    stored = "tts.head_code.0.parametrizations.weight.original"
    head.parametrizations.weight.original0.data = torch.from_numpy(r.get(stored + "0"))
    head.parametrizations.weight.original1.data = torch.from_numpy(r.get(stored + "1"))
    codes = [int(i) for i in np.random.default_rng(1).integers(0, 6562, 16)]
    emb = torch.from_numpy(r.get("tts.emb_code.0.weight"))[torch.tensor(codes)]
    with torch.no_grad():
        want = head(body(inputs_embeds=emb[None]).last_hidden_state)[0].numpy()
    np.testing.assert_allclose(tts_logits(r.get, r.config, codes), want, atol=1e-4)
