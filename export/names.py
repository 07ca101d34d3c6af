"""Name tables: checkpoint tensor names to GGUF tensor names, with the transform each needs.

Export is driven by these tables, not by branches: a table entry names its
source tensor(s) under a part prefix, its GGUF target and a transform key
(see export.transforms). A checkpoint tensor under a converted prefix that no
entry names, or an entry whose tensor is absent, is refused with one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf import TENSOR_NAMES, MODEL_TENSOR

from export.errors import ExportError


@dataclass(frozen=True)
class Entry:
    """One row of a name table; `{i}` in a source name is the layer index."""

    sources: tuple[str, ...]
    target: MODEL_TENSOR
    transform: str = "copy"


@dataclass(frozen=True)
class Mapped:
    """A table row expanded for one layer: full source names and the GGUF tensor name."""

    gguf: str
    sources: tuple[str, ...]
    transform: str
    layer: int | None


def _e(source: str, target: MODEL_TENSOR, transform: str = "copy") -> Entry:
    return Entry((source,), target, transform)


# Qwen3ForCausalLM under "llm." (MiniCPM-o 4.5's language model). llama.cpp's qwen3 uses NeoX rope: no permutation.
QWEN3_GLOBAL: tuple[Entry, ...] = (
    _e("model.embed_tokens.weight", MODEL_TENSOR.TOKEN_EMBD),
    _e("model.norm.weight", MODEL_TENSOR.OUTPUT_NORM),
    _e("lm_head.weight", MODEL_TENSOR.OUTPUT),
)
QWEN3_LAYER: tuple[Entry, ...] = (
    _e("model.layers.{i}.input_layernorm.weight", MODEL_TENSOR.ATTN_NORM),
    _e("model.layers.{i}.self_attn.q_proj.weight", MODEL_TENSOR.ATTN_Q),
    _e("model.layers.{i}.self_attn.k_proj.weight", MODEL_TENSOR.ATTN_K),
    _e("model.layers.{i}.self_attn.v_proj.weight", MODEL_TENSOR.ATTN_V),
    _e("model.layers.{i}.self_attn.o_proj.weight", MODEL_TENSOR.ATTN_OUT),
    _e("model.layers.{i}.self_attn.q_norm.weight", MODEL_TENSOR.ATTN_Q_NORM),
    _e("model.layers.{i}.self_attn.k_norm.weight", MODEL_TENSOR.ATTN_K_NORM),
    _e("model.layers.{i}.post_attention_layernorm.weight", MODEL_TENSOR.FFN_NORM),
    _e("model.layers.{i}.mlp.gate_proj.weight", MODEL_TENSOR.FFN_GATE),
    _e("model.layers.{i}.mlp.up_proj.weight", MODEL_TENSOR.FFN_UP),
    _e("model.layers.{i}.mlp.down_proj.weight", MODEL_TENSOR.FFN_DOWN),
)
# Present in some exports, never needed: computed at run time.
QWEN3_IGNORED: tuple[str, ...] = ("model.layers.{i}.self_attn.rotary_emb.inv_freq", "model.rotary_emb.inv_freq")

# The TTS under "tts.": a LlamaModel body (written as llama.cpp's llama, which wants q/k rows permuted
# for its rope layout), the code embedding as the token embedding and the weight-normalised code head folded.
TTS_GLOBAL: tuple[Entry, ...] = (
    _e("emb_code.0.weight", MODEL_TENSOR.TOKEN_EMBD),
    _e("model.norm.weight", MODEL_TENSOR.OUTPUT_NORM),
    Entry(
        ("head_code.0.parametrizations.weight.original0", "head_code.0.parametrizations.weight.original1"),
        MODEL_TENSOR.OUTPUT,
        "fold_weight_norm",
    ),
)
TTS_LAYER: tuple[Entry, ...] = (
    _e("model.layers.{i}.input_layernorm.weight", MODEL_TENSOR.ATTN_NORM),
    _e("model.layers.{i}.self_attn.q_proj.weight", MODEL_TENSOR.ATTN_Q, "rope_permute_q"),
    _e("model.layers.{i}.self_attn.k_proj.weight", MODEL_TENSOR.ATTN_K, "rope_permute_k"),
    _e("model.layers.{i}.self_attn.v_proj.weight", MODEL_TENSOR.ATTN_V),
    _e("model.layers.{i}.self_attn.o_proj.weight", MODEL_TENSOR.ATTN_OUT),
    _e("model.layers.{i}.post_attention_layernorm.weight", MODEL_TENSOR.FFN_NORM),
    _e("model.layers.{i}.mlp.gate_proj.weight", MODEL_TENSOR.FFN_GATE),
    _e("model.layers.{i}.mlp.up_proj.weight", MODEL_TENSOR.FFN_UP),
    _e("model.layers.{i}.mlp.down_proj.weight", MODEL_TENSOR.FFN_DOWN),
)
# The LlamaModel's own token embedding is unused (inputs are emb_text / emb_code sums).
TTS_IGNORED: tuple[str, ...] = ("model.embed_tokens.weight", "model.layers.{i}.self_attn.rotary_emb.inv_freq")

# TTS tensors that leave the GGUF and go to the extras file, by projector_type.
TTS_PROJECTORS: dict[str, tuple[str, ...]] = {
    "mlp": ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"),
    "default": ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"),
    "linear": ("linear.weight", "linear.bias"),
}
# emb_code is also the GGUF's token embedding; the runtime needs it too, since one llama.cpp batch
# cannot mix token ids and embeddings.
TTS_EXTRA_FIXED: tuple[str, ...] = ("emb_text.weight", "emb_code.0.weight")


def gguf_name(target: MODEL_TENSOR, layer: int | None) -> str:
    base = TENSOR_NAMES[target]
    return (base.format(bid=layer) if layer is not None else base) + ".weight"


def expand(prefix: str, global_rows: tuple[Entry, ...], layer_rows: tuple[Entry, ...], n_layers: int,
           skip: frozenset[MODEL_TENSOR] = frozenset()) -> list[Mapped]:
    """Expand a table for n_layers; rows targeting a tensor in `skip` are left out (e.g. a tied head)."""
    out: list[Mapped] = []
    for e in global_rows[:1]:  # token embedding first, like llama.cpp's converter
        out.append(Mapped(gguf_name(e.target, None), tuple(prefix + s for s in e.sources), e.transform, None))
    for i in range(n_layers):
        for e in layer_rows:
            out.append(Mapped(gguf_name(e.target, i), tuple(prefix + s.format(i=i) for s in e.sources), e.transform, i))
    for e in global_rows[1:]:
        if e.target not in skip:
            out.append(Mapped(gguf_name(e.target, None), tuple(prefix + s for s in e.sources), e.transform, None))
    return out


def expand_names(prefix: str, templates: tuple[str, ...], n_layers: int) -> set[str]:
    return {prefix + t.format(i=i) for t in templates for i in range(max(1, n_layers))}


def check_names(part: str, present: set[str], expected: set[str], ignored: set[str] = frozenset()) -> None:
    """Refuse, in one sentence, a part whose tensors differ from its table."""
    unexpected = sorted(present - expected - ignored)
    missing = sorted(expected - present)
    if unexpected and missing:
        raise ExportError(
            f"Unexpected tensor {unexpected[0]} is not in the {part} name table, and {missing[0]}, "
            f"which the table expects, is missing ({len(unexpected)} unexpected, {len(missing)} missing in all)."
        )
    if unexpected:
        raise ExportError(f"Unexpected tensor {unexpected[0]} is not in the {part} name table "
                          f"({len(unexpected)} unexpected in all).")
    if missing:
        raise ExportError(f"Missing tensor {missing[0]}: the {part} name table expects it and the checkpoint "
                          f"does not hold it ({len(missing)} missing in all).")
