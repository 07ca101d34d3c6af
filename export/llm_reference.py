"""PyTorch reference forwards of the LLM (Qwen3) and the TTS (Llama body, folded code head).

Written from the architectures' definitions (RMSNorm, rotate-half rope,
grouped-query causal attention, SwiGLU MLP; Qwen3 adds a per-head RMSNorm on q
and k) and fed directly from the checkpoint's tensors, in float32: this is what
verify compares llama.cpp's logits against.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

Get = Callable[[str], np.ndarray]


def _t(get: Get, name: str) -> torch.Tensor:
    return torch.from_numpy(np.asarray(get(name), dtype=np.float32))


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x: torch.Tensor, theta: float) -> torch.Tensor:
    """Rotate-half rope over positions 0..T-1; x is (heads, T, head_dim)."""
    _, n, d = x.shape
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    ang = torch.outer(torch.arange(n, dtype=torch.float64), inv)
    cos = torch.cat([ang.cos(), ang.cos()], -1).float()
    sin = torch.cat([ang.sin(), ang.sin()], -1).float()
    half = torch.cat([-x[..., d // 2:], x[..., : d // 2]], -1)
    return x * cos + half * sin


def decoder_forward(get: Get, prefix: str, x: torch.Tensor, n_layers: int, n_head: int, n_head_kv: int,
                    head_dim: int, eps: float, theta: float, qk_norm: bool) -> torch.Tensor:
    """Hidden states after the final norm for input embeddings x (T, hidden)."""
    n = x.shape[0]
    mask = torch.full((n, n), float("-inf")).triu(1)
    for i in range(n_layers):
        p = f"{prefix}model.layers.{i}."
        h = rms_norm(x, _t(get, p + "input_layernorm.weight"), eps)
        q = (h @ _t(get, p + "self_attn.q_proj.weight").T).view(n, n_head, head_dim)
        k = (h @ _t(get, p + "self_attn.k_proj.weight").T).view(n, n_head_kv, head_dim)
        v = (h @ _t(get, p + "self_attn.v_proj.weight").T).view(n, n_head_kv, head_dim)
        if qk_norm:
            q = rms_norm(q, _t(get, p + "self_attn.q_norm.weight"), eps)
            k = rms_norm(k, _t(get, p + "self_attn.k_norm.weight"), eps)
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))
        q, k = rope(q, theta), rope(k, theta)
        rep = n_head // n_head_kv
        k, v = k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0)
        att = torch.softmax(q @ k.transpose(1, 2) / head_dim**0.5 + mask, -1)
        o = (att @ v).transpose(0, 1).reshape(n, n_head * head_dim)
        x = x + o @ _t(get, p + "self_attn.o_proj.weight").T
        h = rms_norm(x, _t(get, p + "post_attention_layernorm.weight"), eps)
        gate = torch.nn.functional.silu(h @ _t(get, p + "mlp.gate_proj.weight").T)
        x = x + (gate * (h @ _t(get, p + "mlp.up_proj.weight").T)) @ _t(get, p + "mlp.down_proj.weight").T
    return rms_norm(x, _t(get, prefix + "model.norm.weight"), eps)


@torch.no_grad()
def qwen3_logits(get: Get, config: dict, token_ids: list[int]) -> np.ndarray:
    """Logits (T, vocab) of the checkpoint's LLM for token_ids."""
    c = config
    head_dim = int(c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"])
    x = _t(get, "llm.model.embed_tokens.weight")[torch.tensor(token_ids)]
    h = decoder_forward(get, "llm.", x, c["num_hidden_layers"], c["num_attention_heads"],
                        c.get("num_key_value_heads", c["num_attention_heads"]), head_dim,
                        c.get("rms_norm_eps", 1e-6), c.get("rope_theta", 1e6), qk_norm=True)
    head = "llm.model.embed_tokens.weight" if c.get("tie_word_embeddings") else "llm.lm_head.weight"
    return (h @ _t(get, head).T).numpy()


@torch.no_grad()
def tts_logits(get: Get, config: dict, code_ids: list[int]) -> np.ndarray:
    """Code logits (T, n_codes) of the TTS fed its own code embeddings; the head is g * v / ||v||."""
    tc = config["tts_config"]
    n_head = tc["num_attention_heads"]
    x = _t(get, "tts.emb_code.0.weight")[torch.tensor(code_ids)]
    h = decoder_forward(get, "tts.", x, tc["num_hidden_layers"], n_head, tc.get("num_key_value_heads", n_head),
                        tc["hidden_size"] // n_head, tc.get("rms_norm_eps", 1e-6), tc.get("rope_theta", 1e4),
                        qk_norm=False)
    g = _t(get, "tts.head_code.0.parametrizations.weight.original0")
    v = _t(get, "tts.head_code.0.parametrizations.weight.original1")
    w = torch._weight_norm(v, g, 0)  # torch's own weight_norm, independent of the exporter's fold
    return (h @ w.T).numpy()


def compare_logits(ref: np.ndarray, got: np.ndarray) -> dict[str, float]:
    """KL(ref || got) averaged over positions, top-1 agreement, max |logit difference|."""
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    lp = ref64 - np.logaddexp.reduce(ref64, axis=-1, keepdims=True)
    lq = got64 - np.logaddexp.reduce(got64, axis=-1, keepdims=True)
    kl = float(np.mean(np.sum(np.exp(lp) * (lp - lq), axis=-1)))
    top1 = float(np.mean(ref.argmax(-1) == got.argmax(-1)))
    return {"kl": kl, "top1": top1, "max_abs": float(np.max(np.abs(ref64 - got64)))}
