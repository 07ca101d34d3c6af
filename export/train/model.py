"""The checkpoint's trainable parts in torch: the Qwen3 LLM, the streaming audio encoder, the vision encoder.

The media encoders are the reference modules the ONNX graphs are traced from
(export/torch_ref), so what is trained is what is exported. The audio encoder
runs a whole session at once with a block-causal mask and per-chunk
convolutions and pooling, which equals chunk-by-chunk encoding with the K/V
cache (tested). The LLM follows the same math as export/llm_reference.py
(RMSNorm, per-head q/k norm, rotate-half rope, grouped-query causal
attention, SwiGLU), batched. Parameters keep their checkpoint names.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from export.torch_ref.audio import AudioEncoder, WhisperLayer
from export.torch_ref.vision import VisionEncoder

Get = Callable[[str], np.ndarray]


def _key(name: str) -> str:
    return name.replace(".", "__")


class Qwen3(nn.Module):
    """Qwen3ForCausalLM under the checkpoint's `llm.` names."""

    def __init__(self, config: dict, get: Get) -> None:
        super().__init__()
        c = config
        self.n_layers, self.heads, self.kv_heads = c["num_hidden_layers"], c["num_attention_heads"], \
            c["num_key_value_heads"]
        self.head_dim = c.get("head_dim") or c["hidden_size"] // self.heads
        self.eps, self.theta = float(c.get("rms_norm_eps", 1e-6)), float(c.get("rope_theta", 1e6))
        self.names = [n for n in self._names()]
        self.p = nn.ParameterDict({_key(n): nn.Parameter(torch.from_numpy(np.array(get(n), np.float32)))
                                   for n in self.names})

    def _names(self):
        yield "llm.model.embed_tokens.weight"
        for i in range(self.n_layers):
            p = f"llm.model.layers.{i}."
            for s in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                      "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm",
                      "post_attention_layernorm", "self_attn.q_norm", "self_attn.k_norm"):
                yield p + s + ".weight"
        yield "llm.model.norm.weight"
        yield "llm.lm_head.weight"

    def w(self, name: str) -> torch.Tensor:
        return self.p[_key(name)]

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.w("llm.model.embed_tokens.weight"))

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w(name)

    def _rope(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.head_dim
        inv = 1.0 / (self.theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        ang = torch.outer(torch.arange(n, dtype=torch.float64), inv)
        return torch.cat([ang.cos(), ang.cos()], -1).float(), torch.cat([ang.sin(), ang.sin()], -1).float()

    @staticmethod
    def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        return x * cos + torch.cat([-x[..., d // 2:], x[..., :d // 2]], -1) * sin

    def forward(self, x: torch.Tensor, at: torch.Tensor | None = None, last_at_only: bool = False) -> torch.Tensor:
        """Input embeddings (B, L, hidden) -> logits (B, L, vocab), or (N, vocab) at the positions of mask `at`.

        `last_at_only` (with `at`): the last layer computes queries, attention output and MLP only at those
        positions (every position still gives its keys and values), the same logits for much less work when few
        positions are read, as in an Omni session where image embeddings fill most of them."""
        b, n, _ = x.shape
        cos, sin = self._rope(n)
        rep = self.heads // self.kv_heads
        for i in range(self.n_layers):
            p = f"llm.model.layers.{i}."
            if last_at_only and at is not None and i == self.n_layers - 1:
                return self._last_at(x, at, p, cos, sin, rep)
            h = self._norm(x, p + "input_layernorm.weight")
            q = (h @ self.w(p + "self_attn.q_proj.weight").T).view(b, n, self.heads, self.head_dim)
            k = (h @ self.w(p + "self_attn.k_proj.weight").T).view(b, n, self.kv_heads, self.head_dim)
            v = (h @ self.w(p + "self_attn.v_proj.weight").T).view(b, n, self.kv_heads, self.head_dim)
            q = self._norm(q, p + "self_attn.q_norm.weight").transpose(1, 2)
            k = self._norm(k, p + "self_attn.k_norm.weight").transpose(1, 2)
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            k, v = k.repeat_interleave(rep, 1), v.transpose(1, 2).repeat_interleave(rep, 1)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + o.transpose(1, 2).reshape(b, n, -1) @ self.w(p + "self_attn.o_proj.weight").T
            x = self._mlp(x, p)
        x = self._norm(x if at is None else x[at], "llm.model.norm.weight")
        return x @ self.w("llm.lm_head.weight").T

    def _mlp(self, x: torch.Tensor, p: str) -> torch.Tensor:
        h = self._norm(x, p + "post_attention_layernorm.weight")
        gate = F.silu(h @ self.w(p + "mlp.gate_proj.weight").T)
        return x + (gate * (h @ self.w(p + "mlp.up_proj.weight").T)) @ self.w(p + "mlp.down_proj.weight").T

    def _last_at(self, x: torch.Tensor, at: torch.Tensor, p: str, cos: torch.Tensor, sin: torch.Tensor,
                 rep: int) -> torch.Tensor:
        """The last layer and the head at the positions of `at` only, in `x[at]`'s order."""
        b, n, _ = x.shape
        counts = at.sum(1)
        m = int(counts.max())
        # Per row, the selected positions first (in order), padded with position 0 (its outputs are dropped).
        order = torch.argsort((~at).to(torch.int8), dim=1, stable=True)[:, :m]
        valid = torch.arange(m)[None, :] < counts[:, None]
        pos = torch.where(valid, order, torch.zeros_like(order))
        h = self._norm(x, p + "input_layernorm.weight")
        k = (h @ self.w(p + "self_attn.k_proj.weight").T).view(b, n, self.kv_heads, self.head_dim)
        v = (h @ self.w(p + "self_attn.v_proj.weight").T).view(b, n, self.kv_heads, self.head_dim)
        k = self._rotate(self._norm(k, p + "self_attn.k_norm.weight").transpose(1, 2), cos, sin)
        k, v = k.repeat_interleave(rep, 1), v.transpose(1, 2).repeat_interleave(rep, 1)
        xs = torch.gather(x, 1, pos[:, :, None].expand(b, m, x.shape[-1]))  # (B, m, hidden)
        hs = torch.gather(h, 1, pos[:, :, None].expand(b, m, h.shape[-1]))
        q = (hs @ self.w(p + "self_attn.q_proj.weight").T).view(b, m, self.heads, self.head_dim)
        q = self._rotate(self._norm(q, p + "self_attn.q_norm.weight").transpose(1, 2), cos[pos][:, None], sin[pos][:, None])
        allowed = (torch.arange(n)[None, None, :] <= pos[:, :, None])[:, None]  # (B, 1, m, L): causal
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        xs = xs + o.transpose(1, 2).reshape(b, m, -1) @ self.w(p + "self_attn.o_proj.weight").T
        xs = self._mlp(xs, p)
        xs = self._norm(xs[valid], "llm.model.norm.weight")
        return xs @ self.w("llm.lm_head.weight").T

    def tensors(self) -> dict[str, np.ndarray]:
        return {n: self.p[_key(n)].detach().float().numpy().copy() for n in self.names}


def loaded_names(module: nn.Module, get: Get, load: Callable[[Get], object]) -> dict[str, str]:
    """Parameter name -> checkpoint name, found by running the module's own `load` on marker tensors."""
    order: list[str] = []

    def marker(name: str) -> np.ndarray:
        order.append(name)
        return np.full(np.shape(get(name)), float(len(order)), np.float32)

    load(marker)
    out = {}
    for pname, param in module.named_parameters():
        value = float(param.detach().reshape(-1)[0])
        if not (1 <= value <= len(order)) or not torch.all(param == value):
            raise AssertionError(f"{pname} was not filled by one checkpoint tensor")
        out[pname] = order[int(value) - 1]
    load(get)  # the real values
    return out


def whisper_layer(layer: WhisperLayer, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """WhisperLayer.forward with an empty cache and a boolean mask, through the fused attention kernel."""
    b, t, c = x.shape
    split = lambda y: y.reshape(b, t, layer.heads, c // layer.heads).transpose(1, 2)  # noqa: E731
    h = layer.self_attn_layer_norm(x)
    attn = F.scaled_dot_product_attention(split(layer.q_proj(h)), split(layer.k_proj(h)), split(layer.v_proj(h)),
                                          attn_mask=allowed)
    x = x + layer.out_proj(attn.transpose(1, 2).reshape(b, t, c))
    return x + layer.fc2(F.gelu(layer.fc1(layer.final_layer_norm(x))))


class Venus(nn.Module):
    """LLM + audio encoder (+ vision encoder for Omni), initialised from a checkpoint's tensors."""

    def __init__(self, config: dict, get: Get, variant: str) -> None:
        super().__init__()
        self.llm = Qwen3(config, get)
        self.audio = AudioEncoder(config)
        self.audio_names = loaded_names(self.audio, get, self.audio.load)
        self.vision: VisionEncoder | None = None
        # Omni: its sessions' image embeddings fill most positions and no target is read at them, so the last LLM
        # layer runs at the read positions only (the same logits up to float rounding; Audio keeps the full pass).
        self.last_at_only = variant == "omni"
        if variant == "omni":
            self.vision = VisionEncoder(config)
            self.vision_names = loaded_names(self.vision, get, self.vision.load)
        self.train()

    def encode_audio(self, mel: torch.Tensor, offset: torch.Tensor | None = None) -> torch.Tensor:
        """mel (B, C, 80, T) of C chunks per session -> (B, C, n, hidden), as chunk-by-chunk streaming gives.

        `offset` (B,): per sequence, the encoder position its first frame takes (0 for a session's start)."""
        a = self.audio
        b, c, m, t = mel.shape
        front = a.front(mel.reshape(b * c, m, t))  # per-chunk convolutions: (B*C, T', width)
        per = front.shape[1]
        x = front.reshape(b, c * per, -1)
        if offset is None:
            x = x + a.embed_positions.weight[:c * per][None]
        else:
            x = x + a.embed_positions.weight[offset[:, None] + torch.arange(c * per)[None]]
        block = torch.arange(c).repeat_interleave(per)
        allowed = block[None, :] <= block[:, None]  # a frame sees its own chunk and every earlier one
        for layer in a.layers:
            x = whisper_layer(layer, x, allowed)
        states = a.layer_norm(x).reshape(b * c, per, -1)
        out = a.head(states)  # pooled inside each chunk
        return out.reshape(b, c, out.shape[1], out.shape[2])

    def freeze_tower(self) -> None:
        """Keep the SigLIP tower as initialised; the resampler still learns (a tenth of the vision cost)."""
        assert self.vision is not None
        v = self.vision
        for module in (v.patch_embedding, v.position_embedding, v.layers, v.post_layernorm):
            module.requires_grad_(False)

    def tower_learns(self) -> bool:
        return self.vision is not None and self.vision.patch_embedding.weight.requires_grad

    def encode_view(self, view: torch.Tensor, towered: torch.Tensor | None = None) -> torch.Tensor:
        """One normalised slice (1, 3, H, W) -> (64, hidden), through the tower and the resampler.

        `towered`: the frozen tower's output for this slice, computed before (export/train/batch.FrameCache)."""
        v = self.vision
        assert v is not None
        if towered is not None and not self.tower_learns():
            x = towered
        else:
            with torch.set_grad_enabled(self.tower_learns() and torch.is_grad_enabled()):
                x = v.tower(view)
        return v.resample(x, view.shape[2] // v.patch, view.shape[3] // v.patch)[0]

    def tensors(self) -> dict[str, np.ndarray]:
        out = self.llm.tensors()
        for module, names in ((self.audio, self.audio_names),
                              (self.vision, getattr(self, "vision_names", {}))):
            if module is None:
                continue
            for pname, param in module.named_parameters():
                out[names[pname]] = param.detach().float().numpy().copy()
        return out
