"""Reference audio path: Whisper-style encoder with a streaming K/V cache, projector, pooling.

MiniCPM-o 4.5 encodes live audio one chunk at a time: each chunk's log-mel
goes through the two convolutions on its own (zero padded at the chunk's
edges), then every layer attends to the cached keys/values of all earlier
chunks plus the whole current chunk (bidirectional inside it). Positions
continue from the cache length. The encoder output is projected
(linear1 -> ReLU -> linear2) to the LLM width and then average-pooled
(kernel = stride = audio_pool_step), in that order, as in the public modeling code.

So the encoder is not causal frame by frame: a frame sees the rest of its own
chunk, and the convolutions look one frame ahead. What does hold, and is
tested, is that chunk-by-chunk encoding with the cache equals encoding the
concatenated chunks at once with a block-causal attention mask and per-chunk
convolutions (`encode_blockwise`).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from export.errors import ExportError
from export.torch_ref.weights import TensorGetter, load_module


class WhisperLayer(nn.Module):
    """Pre-norm Whisper encoder layer whose attention also reads past keys/values."""

    def __init__(self, width: int, ffn: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.self_attn_layer_norm = nn.LayerNorm(width)
        self.final_layer_norm = nn.LayerNorm(width)
        self.q_proj, self.k_proj = nn.Linear(width, width), nn.Linear(width, width, bias=False)
        self.v_proj, self.out_proj = nn.Linear(width, width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, ffn), nn.Linear(ffn, width)

    def forward(self, x: torch.Tensor, past: torch.Tensor, mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (1, T, C); past (2, 1, H, P, C/H) -> (x, present (2, 1, H, P+T, C/H))."""
        b, t, c = x.shape
        split = lambda y: y.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)  # noqa: E731
        h = self.self_attn_layer_norm(x)
        q = split(self.q_proj(h)) * (c // self.heads) ** -0.5
        k = torch.cat([past[0], split(self.k_proj(h))], dim=2)
        v = torch.cat([past[1], split(self.v_proj(h))], dim=2)
        scores = q @ k.transpose(-1, -2)
        if mask is not None:
            scores = scores + mask
        attn = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.out_proj(attn)
        x = x + self.fc2(F.gelu(self.fc1(self.final_layer_norm(x))))
        return x, torch.stack([k, v])

    LOCAL_NAMES = {f"{p}.{s}": f"self_attn.{p}.{s}" for p in ("q_proj", "k_proj", "v_proj", "out_proj")
                   for s in ("weight", "bias")}


class AudioEncoder(nn.Module):
    """apm + audio_projection_layer + AvgPool1d for one chunk with a K/V cache."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        ac = config.get("audio_config")
        if not isinstance(ac, dict):
            raise ExportError("The config has no audio_config, so the audio encoder cannot be built.")
        self.width, self.heads = int(ac["d_model"]), int(ac["encoder_attention_heads"])
        self.mels, self.max_positions = int(ac.get("num_mel_bins", 80)), int(ac.get("max_source_positions", 1500))
        ffn, embed_dim = int(ac["encoder_ffn_dim"]), int(config["hidden_size"])
        self.pool = int(config.get("audio_pool_step", 5))
        self.conv1 = nn.Conv1d(self.mels, self.width, 3, padding=1)
        self.conv2 = nn.Conv1d(self.width, self.width, 3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(self.max_positions, self.width)
        self.layers = nn.ModuleList(WhisperLayer(self.width, ffn, self.heads) for _ in range(int(ac["encoder_layers"])))
        self.layer_norm = nn.LayerNorm(self.width)
        # MiniCPM-o sizes the projector input as encoder_ffn_dim // 4 (= d_model for Whisper).
        self.linear1 = nn.Linear(ffn // 4, embed_dim)
        self.linear2 = nn.Linear(embed_dim, embed_dim)

    def load(self, get: TensorGetter) -> "AudioEncoder":
        for name in ("conv1", "conv2", "embed_positions", "layer_norm"):
            load_module(getattr(self, name), get, f"apm.{name}.")
        for i, layer in enumerate(self.layers):
            load_module(layer, get, f"apm.layers.{i}.", WhisperLayer.LOCAL_NAMES)
        load_module(self.linear1, get, "audio_projection_layer.linear1.")
        load_module(self.linear2, get, "audio_projection_layer.linear2.")
        return self.eval()

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    def empty_cache(self) -> torch.Tensor:
        """The cache before the first chunk: (layers, 2, 1, heads, 0, head_dim)."""
        return torch.zeros(len(self.layers), 2, 1, self.heads, 0, self.head_dim)

    def front(self, mel: torch.Tensor) -> torch.Tensor:
        """The two convolutions of one chunk: (1, mels, T) -> (1, ceil(T/2), width)."""
        return F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)

    def head(self, states: torch.Tensor) -> torch.Tensor:
        """Projector then pooling: (1, T', width) -> (1, T' // pool, embed_dim)."""
        x = self.linear2(torch.relu(self.linear1(states)))
        return F.avg_pool1d(x.transpose(1, 2), self.pool, self.pool).transpose(1, 2)

    def forward(self, mel: torch.Tensor, past: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One chunk: mel (1, mels, T), past (L, 2, 1, H, P, d) -> (embeds, present (L, 2, 1, H, P+T', d))."""
        x = self.front(mel)
        offset = past.shape[4]
        x = x + self.embed_positions.weight[offset:offset + x.shape[1]][None]
        presents = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, past[i])
            presents.append(present)
        return self.head(self.layer_norm(x)), torch.stack(presents)

    def encode_blockwise(self, chunks: list[torch.Tensor]) -> torch.Tensor:
        """All chunks at once: per-chunk convolutions, block-causal attention, one position run."""
        fronts = [self.front(c) for c in chunks]
        x = torch.cat(fronts, dim=1)
        x = x + self.embed_positions.weight[:x.shape[1]][None]
        block = torch.cat([torch.full((f.shape[1],), i) for i, f in enumerate(fronts)])
        mask = torch.where(block[None, :] <= block[:, None], 0.0, float("-inf"))
        empty = torch.zeros(2, 1, self.heads, 0, self.head_dim)
        for layer in self.layers:
            x, _ = layer(x, empty, mask)
        states = self.layer_norm(x)
        # Pool inside each chunk, as streaming does, so windows never straddle a chunk edge.
        outs, start = [], 0
        for f in fronts:
            outs.append(self.head(states[:, start:start + f.shape[1]]))
            start += f.shape[1]
        return torch.cat(outs, dim=1)
