"""The language model (Qwen3 under `llm.`) to a GGUF of llama.cpp's `qwen3` architecture.

Matrices are written as F16 and norms as F32, the usual base for llama.cpp's
quantizer; tensors stream from the checkpoint in row blocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf import GGUFWriter, MODEL_TENSOR

from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.gguf_stream import (PlannedTensor, add_transformer_shape, open_writer, transformer_facts,
                                 write_streamed)
from export.names import QWEN3_GLOBAL, QWEN3_IGNORED, QWEN3_LAYER, Mapped, check_names, expand, expand_names
from export.vocab import REQUIRED_TOKENS, Vocab, add_bpe_vocab, read_vocab

PREFIX = "llm."
ARCH = "qwen3"
BLOCK_BYTES = 4 << 20  # of stored (bf16) data; the f32 upcast and f16 copy make ~4x that transient


@dataclass(frozen=True)
class Qwen3Params:
    """The Qwen3 hyper-parameters the GGUF needs, read from config.json's top level."""

    n_layers: int
    hidden: int
    ffn: int
    n_head: int
    n_head_kv: int
    head_dim: int
    vocab_size: int
    context: int
    rope_theta: float
    rms_eps: float
    tied: bool

    @classmethod
    def from_config(cls, config: dict) -> Qwen3Params:
        need = ("num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "vocab_size")
        missing = [k for k in need if k not in config]
        if missing:
            raise ExportError(f"config.json lacks the Qwen3 key {missing[0]}, so the LLM cannot be exported.")
        if config.get("rope_scaling"):
            raise ExportError(f"config.json sets rope_scaling {config['rope_scaling']}, "
                              "which this exporter does not map yet.")
        n_head = int(config["num_attention_heads"])
        return cls(
            n_layers=int(config["num_hidden_layers"]),
            hidden=int(config["hidden_size"]),
            ffn=int(config["intermediate_size"]),
            n_head=n_head,
            n_head_kv=int(config.get("num_key_value_heads", n_head)),
            head_dim=int(config.get("head_dim") or config["hidden_size"] // n_head),
            vocab_size=int(config["vocab_size"]),
            context=int(config.get("max_position_embeddings", 40960)),
            rope_theta=float(config.get("rope_theta", 1_000_000.0)),
            rms_eps=float(config.get("rms_norm_eps", 1e-6)),
            tied=bool(config.get("tie_word_embeddings", False)),
        )


def llm_table(reader: CheckpointReader, p: Qwen3Params) -> list[Mapped]:
    """The expanded name table, checked against the checkpoint's llm.* tensors."""
    skip = frozenset({MODEL_TENSOR.OUTPUT}) if p.tied else frozenset()
    rows = expand(PREFIX, QWEN3_GLOBAL, QWEN3_LAYER, p.n_layers, skip)
    expected = {s for r in rows for s in r.sources}
    check_names("Qwen3 LLM", set(reader.names(PREFIX)), expected, expand_names(PREFIX, QWEN3_IGNORED, p.n_layers))
    return rows


def plan_tensor(reader: CheckpointReader, row: Mapped) -> PlannedTensor:
    (source,) = row.sources
    info = reader.info(source)
    dtype = np.dtype(np.float32 if len(info.shape) <= 1 else np.float16)
    return PlannedTensor(row.gguf, info.shape, dtype, lambda: reader.blocks(source, BLOCK_BYTES))


def _check_shapes(reader: CheckpointReader, p: Qwen3Params) -> None:
    want = {
        "model.embed_tokens.weight": (p.vocab_size, p.hidden),
        "model.layers.0.self_attn.q_proj.weight": (p.n_head * p.head_dim, p.hidden),
        "model.layers.0.self_attn.k_proj.weight": (p.n_head_kv * p.head_dim, p.hidden),
        "model.layers.0.self_attn.q_norm.weight": (p.head_dim,),
        "model.layers.0.mlp.down_proj.weight": (p.hidden, p.ffn),
    }
    for name, shape in want.items():
        got = reader.info(PREFIX + name).shape
        if tuple(got) != shape:
            raise ExportError(f"Tensor {PREFIX}{name} has shape {list(got)} where config.json implies {list(shape)}.")


def convert_llm(reader: CheckpointReader, out: Path, progress: bool = True) -> dict:
    """Write the F16 base GGUF of the LLM; returns the shape facts for the manifest."""
    p = Qwen3Params.from_config(reader.config)
    rows = llm_table(reader, p)
    _check_shapes(reader, p)
    vocab = read_vocab(reader.path, p.vocab_size)  # a bad tokenizer is refused before anything is written
    tmp = out.with_name(out.name + ".partial")
    w = open_writer(tmp, ARCH)
    add_metadata(w, reader, p, vocab)
    nbytes = write_streamed(w, [plan_tensor(reader, r) for r in rows], desc="llm -> gguf", progress=progress)
    tmp.replace(out)
    ids = {t: i for i, t in enumerate(vocab.tokens)}
    return {
        **transformer_facts(ARCH, p),
        "head_dim": p.head_dim,
        "ffn": p.ffn,
        "vocab_size": p.vocab_size,
        "context": p.context,
        "tensor_bytes": nbytes,
        "protocol_token_ids": {t: ids[t] for t in REQUIRED_TOKENS},
    }


def add_metadata(w: GGUFWriter, reader: CheckpointReader, p: Qwen3Params, vocab: Vocab) -> None:
    """Hyper-parameters and the tokenizer, as llama.cpp's qwen3 loader reads them."""
    w.add_name(reader.config.get("_name_or_path") or reader.path.name)
    add_transformer_shape(w, p)
    w.add_key_length(p.head_dim)
    w.add_value_length(p.head_dim)
    w.add_vocab_size(p.vocab_size)
    add_bpe_vocab(w, vocab)
