"""Tiny, architecture-faithful media parts for generated test checkpoints.

`venus-export tiny` merges `tiny_media_config(variant)` into config.json, writes
`tiny_media_tensors(...)` next to the LLM and TTS tensors, and calls
`write_token2wav_assets(...)` for `assets/token2wav/` (flow, vocoder, voice-prompt
graphs). Names, shapes and config keys follow the MiniCPM-o 4.5 layout (SigLIP
`vision_config`, Whisper `audio_config`); only the widths and depths are scaled
down. Weights are seeded random, scaled so activations stay O(1) and parity
tests are meaningful.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

from export.errors import ExportError

VARIANTS = ("omni", "audio")

# Token2wav sizes: the real structure (80 mel bins, 192-d speaker vector, 6561 codes,
# lookahead 3, upsampling x2, 24 kHz HiFT with rates 8*5*3 and hop 4) at small widths.
TINY_FLOW = {
    "vocab_size": 6561,
    "width": 32,
    "encoder_heads": 2,
    "encoder_units": 64,
    "encoder_blocks": 2,
    "up_blocks": 2,
    "dit_depth": 2,
    "dit_heads": 2,
    "dit_head_dim": 16,
    "dit_hidden": 32,
    "dit_mlp_ratio": 2.0,
}
# One residual kernel per upsampling stage instead of three: the same code path, a third of the work.
TINY_HIFT = {"base_channels": 16, "cond_channels": 16, "resblock_kernels": (7,)}


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ExportError(f"Unknown variant {variant!r}: use one of {', '.join(VARIANTS)}.")


def tiny_media_config(variant: str) -> dict[str, Any]:
    """Config keys for the media parts of a tiny checkpoint, to merge into config.json.

    Returns `vision_config` (Omni only) and `audio_config` with the real
    SigLIP/Whisper key names, plus the top-level media keys of MiniCPMOConfig.
    The resampler and audio projector width is the LLM's `hidden_size`, which
    the caller owns.
    """
    _check_variant(variant)
    audio_config = {
        "model_type": "whisper",
        "d_model": 32,
        "encoder_layers": 2,
        "encoder_attention_heads": 2,
        # MiniCPM-o sizes the projector input as encoder_ffn_dim // 4: keep ffn = 4 * d_model.
        "encoder_ffn_dim": 128,
        "decoder_layers": 1,
        "decoder_attention_heads": 2,
        "decoder_ffn_dim": 128,
        "num_mel_bins": 80,
        "max_source_positions": 1500,
        "activation_function": "gelu",
        "dropout": 0.0,
        "attention_dropout": 0.0,
        "activation_dropout": 0.0,
        "scale_embedding": False,
    }
    config: dict[str, Any] = {
        "audio_config": audio_config,
        "audio_pool_step": 5,
        "audio_chunk_length": 1.0,
        "init_audio": True,
        "init_vision": variant == "omni",
        "query_num": 64,
        "patch_size": 14,
        "image_size": 448,
        "drop_vision_last_layer": True,
    }
    if variant == "omni":
        config["vision_config"] = {
            "model_type": "siglip",
            "hidden_size": 32,
            "image_size": 980,  # 70 x 70 position table, as in the real tower
            "intermediate_size": 64,
            "num_attention_heads": 2,
            "num_hidden_layers": 3,  # 2 remain after drop_vision_last_layer
            "patch_size": 14,
            "num_channels": 3,
            "layer_norm_eps": 1e-6,
            "hidden_act": "gelu_pytorch_tanh",
            "attention_dropout": 0.0,
        }
    return config


class _Init:
    """Seeded initialiser: linear weights ~ N(0, 1/fan_in), norms near identity."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.out: dict[str, np.ndarray] = {}

    def normal(self, name: str, shape: tuple[int, ...], std: float) -> None:
        self.out[name] = (self.rng.standard_normal(shape) * std).astype(np.float32)

    def linear(self, name: str, n_out: int, n_in: int, bias: bool = True) -> None:
        self.normal(f"{name}.weight", (n_out, n_in), n_in**-0.5)
        if bias:
            self.normal(f"{name}.bias", (n_out,), 0.02)

    def norm(self, name: str, width: int) -> None:
        self.out[f"{name}.weight"] = (1.0 + 0.1 * self.rng.standard_normal(width)).astype(np.float32)
        self.normal(f"{name}.bias", (width,), 0.05)


def _vision(init: _Init, vc: dict[str, Any], embed_dim: int, query_num: int, drop_last: bool) -> None:
    width, inner, patch = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["patch_size"])
    side = int(vc["image_size"]) // patch
    channels = int(vc.get("num_channels", 3))
    init.normal("vpm.embeddings.patch_embedding.weight", (width, channels, patch, patch), (channels * patch * patch) ** -0.5)
    init.normal("vpm.embeddings.patch_embedding.bias", (width,), 0.02)
    init.normal("vpm.embeddings.position_embedding.weight", (side * side, width), 0.5)
    layers = int(vc["num_hidden_layers"]) - (1 if drop_last else 0)
    for i in range(layers):
        p = f"vpm.encoder.layers.{i}"
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            init.linear(f"{p}.self_attn.{proj}", width, width)
        init.norm(f"{p}.layer_norm1", width)
        init.norm(f"{p}.layer_norm2", width)
        init.linear(f"{p}.mlp.fc1", inner, width)
        init.linear(f"{p}.mlp.fc2", width, inner)
    init.norm("vpm.post_layernorm", width)
    init.normal("resampler.query", (query_num, embed_dim), 1.0)
    init.linear("resampler.kv_proj", embed_dim, width, bias=False)
    init.normal("resampler.attn.in_proj_weight", (3 * embed_dim, embed_dim), embed_dim**-0.5)
    init.normal("resampler.attn.in_proj_bias", (3 * embed_dim,), 0.02)
    init.linear("resampler.attn.out_proj", embed_dim, embed_dim)
    for ln in ("ln_q", "ln_kv", "ln_post"):
        init.norm(f"resampler.{ln}", embed_dim)
    init.normal("resampler.proj", (embed_dim, embed_dim), embed_dim**-0.5)


def _audio(init: _Init, ac: dict[str, Any], embed_dim: int) -> None:
    width, ffn, mels = int(ac["d_model"]), int(ac["encoder_ffn_dim"]), int(ac["num_mel_bins"])
    init.normal("apm.conv1.weight", (width, mels, 3), (mels * 3) ** -0.5)
    init.normal("apm.conv1.bias", (width,), 0.02)
    init.normal("apm.conv2.weight", (width, width, 3), (width * 3) ** -0.5)
    init.normal("apm.conv2.bias", (width,), 0.02)
    init.normal("apm.embed_positions.weight", (int(ac["max_source_positions"]), width), 0.5)
    for i in range(int(ac["encoder_layers"])):
        p = f"apm.layers.{i}"
        init.linear(f"{p}.self_attn.q_proj", width, width)
        init.linear(f"{p}.self_attn.k_proj", width, width, bias=False)  # Whisper keys carry no bias
        init.linear(f"{p}.self_attn.v_proj", width, width)
        init.linear(f"{p}.self_attn.out_proj", width, width)
        init.norm(f"{p}.self_attn_layer_norm", width)
        init.linear(f"{p}.fc1", ffn, width)
        init.linear(f"{p}.fc2", width, ffn)
        init.norm(f"{p}.final_layer_norm", width)
    init.norm("apm.layer_norm", width)
    init.linear("audio_projection_layer.linear1", embed_dim, ffn // 4)
    init.linear("audio_projection_layer.linear2", embed_dim, embed_dim)


def tiny_media_tensors(variant: str, config: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """All vpm./resampler./apm./audio_projection_layer. tensors of a tiny checkpoint (float32).

    `config` is the checkpoint's config.json (or at least `hidden_size` plus the
    keys of `tiny_media_config`); missing media keys fall back to the tiny ones.
    The Audio variant has no vision tower, so no vpm./resampler. tensors.
    """
    _check_variant(variant)
    if "hidden_size" not in config:
        raise ExportError("The config has no hidden_size: the resampler and audio projector need the LLM width.")
    merged = {**tiny_media_config(variant), **config}
    embed_dim = int(merged["hidden_size"])
    init = _Init(seed)
    if variant == "omni":
        _vision(init, merged["vision_config"], embed_dim, int(merged["query_num"]),
                bool(merged["drop_vision_last_layer"]))
    _audio(init, merged["audio_config"], embed_dim)
    return init.out


def write_token2wav_assets(out_dir: pathlib.Path, seed: int) -> None:
    """Write tiny flow.yaml, flow.pt, hift.pt and the two voice-prompt graphs (campplus, speech tokenizer)."""
    from export.torch_ref.tiny_prompt_graphs import write_tiny_prompt_graphs
    from export.torch_ref.token2wav_assets import write_tiny_assets

    write_tiny_assets(pathlib.Path(out_dir), seed, TINY_FLOW, TINY_HIFT)
    write_tiny_prompt_graphs(pathlib.Path(out_dir), seed)
