"""`venus-export tiny`: a checkpoint with the real layout (docs/checkpoint.md), scaled down, seeded random.

config.json carries the real keys, tensors are bf16 in sharded safetensors with
model.safetensors.index.json, the tokenizer is a Qwen2-style BPE with every
protocol and MiniCPM-o special token. The LLM and TTS tensors are made here;
the media parts (vision, audio encoder, token2wav assets) by
export.torch_ref.tiny_parts when it is importable.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np

from export.errors import ExportError
from export.special_tokens import EOS_TOKEN, PAD_TOKEN
from export.tiny_tokenizer import write_tokenizer_files

VARIANTS = ("omni", "audio")

# Widths are multiples of 256 so that every llama.cpp type, K-quants included, applies unchanged.
TINY_LLM = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 64}
TINY_TTS = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 4, "num_audio_tokens": 6562}


def media_parts():
    """The media-part generator module, or None where it is not available."""
    try:
        from export.torch_ref import tiny_parts
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("export.torch_ref"):
            return None
        raise
    return tiny_parts


def make_config(variant: str, vocab_size: int, eos_id: int, pad_id: int, llm: dict | None = None,
                tts: dict | None = None, audio: dict | None = None) -> dict:
    """`audio`: keys that override the tiny Whisper `audio_config` (e.g. a wider encoder)."""
    llm = {**TINY_LLM, **(llm or {})}
    tts = {**TINY_TTS, **(tts or {})}
    config = {
        "_name_or_path": f"venus-tiny-{variant}",
        "architectures": ["MiniCPMO"],
        "model_type": "minicpmo",
        "version": "4.5",
        **llm,
        "hidden_act": "silu",
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "rope_scaling": None,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "use_sliding_window": False,
        "vocab_size": vocab_size,
        "bos_token_id": pad_id,
        "eos_token_id": eos_id,
        "torch_dtype": "bfloat16",
        "init_vision": variant == "omni",
        "init_audio": True,
        "init_tts": True,
        "max_slice_nums": 9,
        "slice_mode": True,
        "scale_resolution": 448,
        "use_image_id": True,
        "stream_input": True,
        "tts_config": {
            "model_type": "minicpmtts",
            "llm_dim": llm["hidden_size"],
            **tts,
            "max_position_embeddings": 4096,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "num_text_tokens": vocab_size,
            "num_vq": 1,
            "projector_type": "mlp",
            "normalize_projected_hidden": True,
            "audio_bos_token_id": tts["num_audio_tokens"] - 1,
        },
    }
    parts = media_parts()
    if parts is not None:
        config.update(parts.tiny_media_config(variant))
        if audio:
            config["audio_config"] = {**config["audio_config"], **audio}
    return config


class _Rng:
    """Seeded per tensor (seed, crc32 of the name): a tensor's values do not depend on generation order."""

    def __init__(self, seed: int):
        self.seed = seed

    def normal(self, name: str, shape: tuple[int, ...], std: float, mean: float = 0.0) -> np.ndarray:
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        return (rng.standard_normal(shape, dtype=np.float32) * std + mean).astype(np.float32)


def llm_tensors(config: dict, seed: int) -> dict[str, np.ndarray]:
    r, h, f = _Rng(seed), config["hidden_size"], config["intermediate_size"]
    nh, nkv = config["num_attention_heads"], config["num_key_value_heads"]
    hd, v = config["head_dim"], config["vocab_size"]
    t = {"llm.model.embed_tokens.weight": r.normal("llm.embed", (v, h), 1.0)}
    for i in range(config["num_hidden_layers"]):
        p = f"llm.model.layers.{i}."
        for name, shape in (("self_attn.q_proj", (nh * hd, h)), ("self_attn.k_proj", (nkv * hd, h)),
                            ("self_attn.v_proj", (nkv * hd, h)), ("self_attn.o_proj", (h, nh * hd)),
                            ("mlp.gate_proj", (f, h)), ("mlp.up_proj", (f, h)), ("mlp.down_proj", (h, f))):
            t[p + name + ".weight"] = r.normal(p + name, shape, shape[1] ** -0.5)
        for name, width in (("input_layernorm", h), ("post_attention_layernorm", h),
                            ("self_attn.q_norm", hd), ("self_attn.k_norm", hd)):
            t[p + name + ".weight"] = r.normal(p + name, (width,), 0.1, 1.0)
    t["llm.model.norm.weight"] = r.normal("llm.norm", (h,), 0.1, 1.0)
    # A wide head makes the next-token distribution peaked enough for top-1 and KL checks to mean something.
    t["llm.lm_head.weight"] = r.normal("llm.lm_head", (v, h), 3.0 * h ** -0.5)
    return t


def tts_tensors(config: dict, seed: int) -> dict[str, np.ndarray]:
    tc, r = config["tts_config"], _Rng(seed + 1)
    h, f, n = tc["hidden_size"], tc["intermediate_size"], tc["num_hidden_layers"]
    nh, nkv = tc["num_attention_heads"], tc["num_key_value_heads"]
    codes, llm_dim = tc["num_audio_tokens"], tc["llm_dim"]
    hd = h // nh
    t = {"tts.emb_text.weight": r.normal("emb_text", (tc["num_text_tokens"], h), 1.0),
         "tts.emb_code.0.weight": r.normal("emb_code", (codes, h), 1.0)}
    for proj in ("projector_spk", "projector_semantic"):
        t[f"tts.{proj}.linear1.weight"] = r.normal(proj + "1", (h, llm_dim), llm_dim ** -0.5)
        t[f"tts.{proj}.linear1.bias"] = r.normal(proj + "1b", (h,), 0.02)
        t[f"tts.{proj}.linear2.weight"] = r.normal(proj + "2", (h, h), h ** -0.5)
        t[f"tts.{proj}.linear2.bias"] = r.normal(proj + "2b", (h,), 0.02)
    for i in range(n):
        p = f"tts.model.layers.{i}."
        for name, shape in (("self_attn.q_proj", (nh * hd, h)), ("self_attn.k_proj", (nkv * hd, h)),
                            ("self_attn.v_proj", (nkv * hd, h)), ("self_attn.o_proj", (h, nh * hd)),
                            ("mlp.gate_proj", (f, h)), ("mlp.up_proj", (f, h)), ("mlp.down_proj", (h, f))):
            t[p + name + ".weight"] = r.normal(p + name, shape, shape[1] ** -0.5)
        for name in ("input_layernorm", "post_attention_layernorm"):
            t[p + name + ".weight"] = r.normal(p + name, (h,), 0.1, 1.0)
    t["tts.model.norm.weight"] = r.normal("tts.norm", (h,), 0.1, 1.0)
    # Weight normalisation as torch stores it: original0 = g (out, 1), original1 = v (out, in).
    t["tts.head_code.0.parametrizations.weight.original0"] = np.abs(r.normal("head_g", (codes, 1), 1.0)) + 1.0
    t["tts.head_code.0.parametrizations.weight.original1"] = r.normal("head_v", (codes, h), 1.0)
    return t


def write_assets(parts, out: Path, seed: int) -> None:
    """token2wav assets; where their generator cannot run here, the checkpoint is still usable without them."""
    try:
        parts.write_token2wav_assets(out, seed)
    except (ModuleNotFoundError, ExportError) as e:
        shutil.rmtree(out, ignore_errors=True)
        print(f"note: token2wav assets skipped: {e}", file=sys.stderr)


def write_shards(out: Path, tensors: dict[str, np.ndarray], max_shard_bytes: int, dtype: str = "bf16") -> list[str]:
    """Sharded safetensors plus model.safetensors.index.json, in the stored dtype (bf16 like the real one)."""
    import torch
    from safetensors.torch import save_file

    tdtype = {"bf16": torch.bfloat16, "f32": torch.float32, "f16": torch.float16}[dtype]
    groups: list[list[str]] = [[]]
    size = 0
    for name, a in tensors.items():
        nbytes = a.size * torch.tensor([], dtype=tdtype).element_size()
        if groups[-1] and size + nbytes > max_shard_bytes:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += nbytes
    files = [f"model-{k + 1:05d}-of-{len(groups):05d}.safetensors" for k in range(len(groups))]
    weight_map, total = {}, 0
    for file, names in zip(files, groups):
        shard = {n: torch.from_numpy(tensors[n]).to(tdtype) for n in names}
        save_file(shard, str(out / file), metadata={"format": "pt"})
        total += sum(t.numel() * t.element_size() for t in shard.values())
        weight_map.update({n: file for n in names})
        del shard
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    return files


def write_tiny(out: Path, variant: str, seed: int = 0, *, llm: dict | None = None, tts: dict | None = None,
               audio: dict | None = None, max_shard_bytes: int = 4 << 20, dtype: str = "bf16") -> dict:
    """Write a tiny checkpoint into `out`; returns its config."""
    if variant not in VARIANTS:
        raise ExportError(f"Unknown variant {variant!r}: use one of {', '.join(VARIANTS)}.")
    out.mkdir(parents=True, exist_ok=True)
    if (out / "config.json").exists() or (out / "model.safetensors.index.json").exists():
        raise ExportError(f"{out} already holds a checkpoint; choose an empty directory.")
    n_ids = write_tokenizer_files(out, seed)
    tok = json.loads((out / "added_tokens.json").read_text())
    vocab_size = 64 * math.ceil((n_ids + 37) / 64)  # padded past the last id, like the real 151,748
    config = make_config(variant, vocab_size, tok[EOS_TOKEN], tok[PAD_TOKEN], llm, tts, audio)
    tensors = {**llm_tensors(config, seed), **tts_tensors(config, seed)}
    parts = media_parts()
    if parts is not None:
        tensors.update(parts.tiny_media_tensors(variant, config, seed + 2))
        write_assets(parts, out / "assets" / "token2wav", seed + 3)
    else:
        config["init_audio"] = False
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    write_shards(out, tensors, max_shard_bytes, dtype)
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": config["eos_token_id"]}) + "\n")
    return config
