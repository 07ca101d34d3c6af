"""The TTS (under `tts.`) to a GGUF of llama.cpp's `llama` architecture, plus an extras file.

The GGUF takes the LlamaModel body, the code embedding `emb_code.0` as its
token embedding (code ids fed back as tokens) and the code head with its weight
normalisation folded as its output; its tokenizer is "none" (6,562 codes, no
text). The text and code embeddings and the two projectors, which the runtime
applies itself to build each step's input embedding, go to `tts-extras.npz`: one
`.npy` per source tensor (name without `tts.`), matrices in float16, vectors in
float32, written one array at a time.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.gguf_stream import (PlannedTensor, add_transformer_shape, open_writer, transformer_facts,
                                 write_streamed)
from export.names import TTS_EXTRA_FIXED, TTS_GLOBAL, TTS_IGNORED, TTS_LAYER, TTS_PROJECTORS, Mapped, check_names, \
    expand, expand_names
from export.transforms import transforms_for

PREFIX = "tts."
ARCH = "llama"
PROJECTORS = ("projector_spk", "projector_semantic")


@dataclass(frozen=True)
class TTSParams:
    """Hyper-parameters of the TTS from config.json's `tts_config`."""

    n_layers: int
    hidden: int
    ffn: int
    n_head: int
    n_head_kv: int
    n_codes: int
    n_vq: int
    context: int
    rope_theta: float
    rms_eps: float
    projector_type: str

    @property
    def head_dim(self) -> int:
        return self.hidden // self.n_head

    @classmethod
    def from_config(cls, config: dict) -> TTSParams:
        tc = config.get("tts_config")
        if not isinstance(tc, dict):
            raise ExportError("config.json has no tts_config, so the speech decoder cannot be exported.")
        need = ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers", "num_audio_tokens")
        missing = [k for k in need if k not in tc]
        if missing:
            raise ExportError(f"tts_config lacks the key {missing[0]}, so the speech decoder cannot be exported.")
        ptype = str(tc.get("projector_type", "mlp"))
        if ptype not in TTS_PROJECTORS:
            raise ExportError(f"tts_config has projector_type {ptype!r}; known types are {', '.join(TTS_PROJECTORS)}.")
        n_vq = int(tc.get("num_vq", 1))
        if n_vq != 1:
            raise ExportError(f"tts_config has num_vq {n_vq}; this exporter handles one codebook (MiniCPM-o 4.5).")
        n_head = int(tc["num_attention_heads"])
        return cls(int(tc["num_hidden_layers"]), int(tc["hidden_size"]), int(tc["intermediate_size"]), n_head,
                   int(tc.get("num_key_value_heads", n_head)), int(tc["num_audio_tokens"]), n_vq,
                   int(tc.get("max_position_embeddings", 4096)), float(tc.get("rope_theta", 10000.0)),
                   float(tc.get("rms_norm_eps", 1e-6)), ptype)


def extra_names(p: TTSParams) -> list[str]:
    names = [PREFIX + n for n in TTS_EXTRA_FIXED]
    names += [f"{PREFIX}{proj}.{t}" for proj in PROJECTORS for t in TTS_PROJECTORS[p.projector_type]]
    return names


def tts_table(reader: CheckpointReader, p: TTSParams) -> list[Mapped]:
    rows = expand(PREFIX, TTS_GLOBAL, TTS_LAYER, p.n_layers)
    expected = {s for r in rows for s in r.sources} | set(extra_names(p))
    check_names("TTS", set(reader.names(PREFIX)), expected, expand_names(PREFIX, TTS_IGNORED, p.n_layers))
    return rows


def _plan(reader: CheckpointReader, row: Mapped, p: TTSParams) -> PlannedTensor:
    fn = transforms_for(p.n_head, p.n_head_kv)[row.transform]
    shape = reader.info(row.sources[-1]).shape  # the fold's direction tensor carries the output shape
    dtype = np.dtype(np.float32 if len(shape) <= 1 else np.float16)
    if row.transform == "copy":
        return PlannedTensor(row.gguf, shape, dtype, lambda: reader.blocks(row.sources[0]))
    return PlannedTensor(row.gguf, shape, dtype, lambda: iter([fn(*(reader.get(s) for s in row.sources))]))


def write_extras(reader: CheckpointReader, p: TTSParams, out: Path) -> dict[str, dict]:
    """Write the extras .npz one array at a time; returns name -> {shape, dtype}."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    arrays: dict[str, dict] = {}
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name in extra_names(p):
            a = reader.get(name)
            a = a.astype(np.float16 if a.ndim >= 2 else np.float32)
            key = name[len(PREFIX):]
            with zf.open(key + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a, allow_pickle=False)
            arrays[key] = {"shape": list(a.shape), "dtype": str(a.dtype)}
            del a
    tmp.replace(out)
    return arrays


def convert_tts_extras(reader: CheckpointReader, out: Path) -> dict:
    """Write the extras .npz; returns its description for the manifest."""
    p = TTSParams.from_config(reader.config)
    tts_table(reader, p)
    return {"format": "npz", "projector_type": p.projector_type, "arrays": write_extras(reader, p, out),
            "step_input": "text steps: emb_text.weight[token] + l2_normalize(projector_semantic(llm_hidden)); "
                          "code steps: emb_code.0.weight[code], or the code id as a token of the TTS GGUF"}


def convert_tts(reader: CheckpointReader, out_gguf: Path, progress: bool = True) -> dict:
    """Write the TTS GGUF (F16 base); returns the shape facts for the manifest."""
    p = TTSParams.from_config(reader.config)
    rows = tts_table(reader, p)
    for name, want in ((f"{PREFIX}emb_code.0.weight", (p.n_codes, p.hidden)),
                       (f"{PREFIX}model.layers.0.self_attn.q_proj.weight", (p.n_head * p.head_dim, p.hidden))):
        if tuple(reader.info(name).shape) != want:
            raise ExportError(f"Tensor {name} has shape {list(reader.info(name).shape)} "
                              f"where tts_config implies {list(want)}.")
    tmp = out_gguf.with_name(out_gguf.name + ".partial")
    w = open_writer(tmp, ARCH)
    w.add_name("venus-tts")
    add_transformer_shape(w, p)
    w.add_rope_dimension_count(p.head_dim)
    w.add_vocab_size(p.n_codes)  # llama.cpp needs it when the tokenizer is "none"
    w.add_tokenizer_model("none")
    nbytes = write_streamed(w, [_plan(reader, r, p) for r in rows], desc="tts -> gguf", progress=progress)
    tmp.replace(out_gguf)
    return {
        **transformer_facts(ARCH, p),
        "ffn": p.ffn,
        "n_codes": p.n_codes,
        "projector_type": p.projector_type,
        "tensor_bytes": nbytes,
    }
