"""Reference vision path: SigLIP tower (NaViT positions) + the 64-query resampler.

One slice in (1, 3, H, W), H and W multiples of the patch size, already
normalised; 64 embeddings of the LLM width out. Patches are taken in raster
order, which is the order MiniCPM-o's by-patch reshape produces.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from export.errors import ExportError
from export.torch_ref.weights import TensorGetter, fetch, load_module


def bucket_table(side: int) -> torch.Tensor:
    """Row n holds the position bucket of patch i for a slice n patches long (i < n).

    Computed with the model's own float rule (arange of fractions bucketised
    against side-1 boundaries) so the exported graph can gather it exactly.
    """
    boundaries = torch.arange(1 / side, 1.0, 1 / side)
    table = torch.zeros(side + 1, side, dtype=torch.int64)
    for n in range(1, side + 1):
        fractions = torch.arange(0, 1 - 1e-6, 1 / n)
        table[n, :n] = torch.bucketize(fractions, boundaries, right=True)
    return table


def sincos_omega(half_dim: int) -> torch.Tensor:
    """Frequencies of the resampler's 1D sin-cos embedding, computed in float32 as the model does."""
    omega = np.arange(half_dim // 2, dtype=np.float32)
    omega /= half_dim / 2.0
    return torch.from_numpy((1.0 / 10000**omega).astype(np.float32))


def sincos_2d(h: torch.Tensor | int, w: torch.Tensor | int, omega: torch.Tensor) -> torch.Tensor:
    """(h*w, D) 2D sin-cos positions; the first half encodes the column, the second the row."""
    cols = torch.arange(w, dtype=torch.float32)
    rows = torch.arange(h, dtype=torch.float32)
    col_arg = cols[:, None] * omega[None, :]
    row_arg = rows[:, None] * omega[None, :]
    col_emb = torch.cat([torch.sin(col_arg), torch.cos(col_arg)], dim=-1)  # (w, D/2)
    row_emb = torch.cat([torch.sin(row_arg), torch.cos(row_arg)], dim=-1)  # (h, D/2)
    grid = torch.cat([col_emb[None, :, :].expand(rows.shape[0], -1, -1),
                      row_emb[:, None, :].expand(-1, cols.shape[0], -1)], dim=-1)
    return grid.reshape(-1, grid.shape[-1])


class SiglipLayer(nn.Module):
    """Pre-norm encoder layer: attention and a tanh-GELU MLP, each with a residual."""

    def __init__(self, width: int, inner: int, heads: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.layer_norm1 = nn.LayerNorm(width, eps=eps)
        self.layer_norm2 = nn.LayerNorm(width, eps=eps)
        self.q_proj, self.k_proj = nn.Linear(width, width), nn.Linear(width, width)
        self.v_proj, self.out_proj = nn.Linear(width, width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, inner), nn.Linear(inner, width)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        split = lambda y: y.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        weights = torch.softmax(q @ k.transpose(-1, -2) * (c // self.heads) ** -0.5, dim=-1)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, t, c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.layer_norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.layer_norm2(x)), approximate="tanh"))

    LOCAL_NAMES = {
        "q_proj.weight": "self_attn.q_proj.weight", "q_proj.bias": "self_attn.q_proj.bias",
        "k_proj.weight": "self_attn.k_proj.weight", "k_proj.bias": "self_attn.k_proj.bias",
        "v_proj.weight": "self_attn.v_proj.weight", "v_proj.bias": "self_attn.v_proj.bias",
        "out_proj.weight": "self_attn.out_proj.weight", "out_proj.bias": "self_attn.out_proj.bias",
        "fc1.weight": "mlp.fc1.weight", "fc1.bias": "mlp.fc1.bias",
        "fc2.weight": "mlp.fc2.weight", "fc2.bias": "mlp.fc2.bias",
    }


class VisionEncoder(nn.Module):
    """vpm tower + resampler: a normalised slice (1, 3, H, W) -> (1, query_num, embed_dim)."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        vc = config.get("vision_config")
        if not isinstance(vc, dict):
            raise ExportError("The config has no vision_config, so the checkpoint cannot hold a vision tower.")
        self.patch = int(vc["patch_size"])
        self.side = int(vc["image_size"]) // self.patch
        width, eps = int(vc["hidden_size"]), float(vc.get("layer_norm_eps", 1e-6))
        depth = int(vc["num_hidden_layers"]) - (1 if config.get("drop_vision_last_layer", True) else 0)
        self.embed_dim = int(config["hidden_size"])
        # The reference uses embed_dim // 128 heads; tiny widths below 128 keep one head.
        self.res_heads = max(1, self.embed_dim // 128)
        self.query_num = int(config.get("query_num", 64))
        self.patch_embedding = nn.Conv2d(int(vc.get("num_channels", 3)), width, self.patch, self.patch)
        self.position_embedding = nn.Embedding(self.side * self.side, width)
        self.layers = nn.ModuleList(
            SiglipLayer(width, int(vc["intermediate_size"]), int(vc["num_attention_heads"]), eps)
            for _ in range(depth))
        self.post_layernorm = nn.LayerNorm(width, eps=eps)
        self.query = nn.Parameter(torch.zeros(self.query_num, self.embed_dim))
        self.kv_proj = nn.Linear(width, self.embed_dim, bias=False)
        self.attn = nn.MultiheadAttention(self.embed_dim, self.res_heads)
        self.ln_q = nn.LayerNorm(self.embed_dim, eps=1e-6)
        self.ln_kv = nn.LayerNorm(self.embed_dim, eps=1e-6)
        self.ln_post = nn.LayerNorm(self.embed_dim, eps=1e-6)
        self.proj = nn.Parameter(torch.zeros(self.embed_dim, self.embed_dim))
        self.register_buffer("buckets", bucket_table(self.side), persistent=False)
        self.register_buffer("omega", sincos_omega(self.embed_dim // 2), persistent=False)

    def load(self, get: TensorGetter) -> "VisionEncoder":
        load_module(self.patch_embedding, get, "vpm.embeddings.patch_embedding.")
        load_module(self.position_embedding, get, "vpm.embeddings.position_embedding.")
        for i, layer in enumerate(self.layers):
            load_module(layer, get, f"vpm.encoder.layers.{i}.", SiglipLayer.LOCAL_NAMES)
        load_module(self.post_layernorm, get, "vpm.post_layernorm.")
        with torch.no_grad():
            self.query.copy_(fetch(get, "resampler.query", tuple(self.query.shape)))
            self.proj.copy_(fetch(get, "resampler.proj", tuple(self.proj.shape)))
        for name in ("kv_proj", "attn", "ln_q", "ln_kv", "ln_post"):
            load_module(getattr(self, name), get, f"resampler.{name}.")
        return self.eval()

    def tower(self, pixels: torch.Tensor) -> torch.Tensor:
        h, w = pixels.shape[2] // self.patch, pixels.shape[3] // self.patch
        x = self.patch_embedding(pixels).flatten(2).transpose(1, 2)  # (1, h*w, width), raster order
        rows, cols = self.buckets[h, :h], self.buckets[w, :w]
        ids = (rows[:, None] * self.side + cols[None, :]).reshape(-1)
        x = x + self.position_embedding(ids)[None]
        for layer in self.layers:
            x = layer(x)
        return self.post_layernorm(x)

    def resample(self, x: torch.Tensor, h: torch.Tensor | int, w: torch.Tensor | int) -> torch.Tensor:
        pos = sincos_2d(h, w, self.omega)  # (h*w, E)
        kv = self.ln_kv(self.kv_proj(x)).permute(1, 0, 2)  # (L, 1, E)
        q = self.ln_q(self.query)[:, None, :]  # (Q, 1, E)
        out = self.attn(q, kv + pos[:, None, :], kv, need_weights=False)[0]
        return self.ln_post(out.permute(1, 0, 2)) @ self.proj

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.resample(self.tower(pixels), pixels.shape[2] // self.patch, pixels.shape[3] // self.patch)
