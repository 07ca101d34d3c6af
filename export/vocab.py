"""Read a checkpoint's Qwen2-style BPE tokenizer files into what a GGUF vocabulary needs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gguf import GGUFWriter, TokenType

from edge.protocol.tokens import PROTOCOL_TOKENS
from export.errors import ExportError
from export.special_tokens import CONTROL_TOKENS, EOS_TOKEN, PAD_TOKEN

REQUIRED_TOKENS: tuple[str, ...] = PROTOCOL_TOKENS + ("<|im_start|>", "<|im_end|>")


@dataclass
class Vocab:
    """Tokens in id order (padded to the model's vocab_size), their types, the BPE merges and specials."""

    tokens: list[str]
    types: list[int]
    merges: list[str]
    special_ids: dict[str, int] = field(default_factory=dict)
    add_bos: bool = False
    chat_template: str | None = None


def _token_text(value: object) -> str | None:
    """tokenizer_config.json gives special tokens as a string or as {"content": ...}."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _merge_text(m: object) -> str:
    # tokenizers >= 0.20 may store a merge as a [left, right] pair instead of "left right"
    return " ".join(m) if isinstance(m, list) else str(m)


def read_vocab(ckpt: Path, vocab_size: int) -> Vocab:
    """Vocabulary of the checkpoint at `ckpt`; every protocol token must be one entry, typed CONTROL."""
    tj = ckpt / "tokenizer.json"
    if not tj.is_file():
        raise ExportError(f"{ckpt} has no tokenizer.json (a Qwen2 BPE tokenizer is expected).")
    try:
        data = json.loads(tj.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ExportError(f"{tj} is not valid JSON (line {e.lineno}).") from None
    model = data.get("model", {})
    if model.get("type") != "BPE":
        raise ExportError(f"{tj} holds a {model.get('type')} model, but the exporter expects a BPE tokenizer.")
    base: dict[str, int] = model["vocab"]
    added = {t["content"]: (int(t["id"]), bool(t.get("special", False))) for t in data.get("added_tokens", [])}

    n_ids = max([*base.values(), *(i for i, _ in added.values())]) + 1
    if n_ids > vocab_size:
        raise ExportError(f"The tokenizer has ids up to {n_ids - 1}, beyond the model's vocab_size {vocab_size}.")
    tokens = [f"[PAD{i}]" for i in range(vocab_size)]
    types = [int(TokenType.UNUSED)] * vocab_size
    for text, i in base.items():
        tokens[i], types[i] = text, int(TokenType.NORMAL)
    for text, (i, special) in added.items():
        control = special or text in CONTROL_TOKENS
        tokens[i], types[i] = text, int(TokenType.CONTROL if control else TokenType.USER_DEFINED)

    for text in REQUIRED_TOKENS:
        if text not in added and text not in base:
            raise ExportError(f"Token {text} is not a single entry of the tokenizer, "
                              "so the protocol cannot be encoded.")
        types[added[text][0] if text in added else base[text]] = int(TokenType.CONTROL)

    cfg_path = ckpt / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else {}
    ids = {t: i for i, t in enumerate(tokens)}
    special_ids: dict[str, int] = {}
    for role, default in (("eos", EOS_TOKEN), ("pad", PAD_TOKEN), ("bos", None)):
        text = _token_text(cfg.get(f"{role}_token")) or default
        if text is not None:
            if text not in ids:
                raise ExportError(f"The {role} token {text} named in tokenizer_config.json is not in the vocabulary.")
            special_ids[role] = ids[text]
    template = cfg.get("chat_template")
    if isinstance(template, list):  # named templates: keep the default one
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    return Vocab(tokens, types, [_merge_text(m) for m in model.get("merges", [])], special_ids,
                 bool(cfg.get("add_bos_token", False)), template)


def add_bpe_vocab(writer: GGUFWriter, vocab: Vocab) -> None:
    """Key-values of a gpt2-style BPE vocabulary with the qwen2 pre-tokenizer."""
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(vocab.tokens)
    writer.add_token_types(vocab.types)
    writer.add_token_merges(vocab.merges)
    if "bos" in vocab.special_ids:
        writer.add_bos_token_id(vocab.special_ids["bos"])
    writer.add_eos_token_id(vocab.special_ids["eos"])
    writer.add_pad_token_id(vocab.special_ids["pad"])
    writer.add_add_bos_token(vocab.add_bos)
    if vocab.chat_template:
        writer.add_chat_template(vocab.chat_template)
