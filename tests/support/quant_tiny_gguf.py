"""A tiny llama-architecture F16 GGUF with seeded random weights and the protocol tokens.

Wide enough (hidden 256, FFN 768) for K-quants (blocks of 256 columns) and
for the quality ordering of precisions to be stable. The `<delegate>` output
row is scaled up so that some positions actually emit it and delegate
agreement is exercised, not trivially 1.
"""
from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from edge.protocol.tokens import PROTOCOL_TOKENS

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *PROTOCOL_TOKENS]
MERGES = [("Ġ", "t"), ("h", "e"), ("i", "n"), ("e", "r"), ("Ġ", "a"), ("o", "n"), ("r", "e"), ("Ġt", "he"),
          ("Ġ", "s"), ("e", "d"), ("a", "n"), ("Ġ", "w"), ("o", "r"), ("Ġ", "o"), ("i", "s"), ("e", "n")]


def _byte_chars() -> list[str]:
    """GPT-2's byte-to-unicode table: printable bytes map to themselves, the rest to 256+."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def write_tiny_gguf(path: Path, seed: int = 0, n_embd: int = 256, n_layer: int = 2, n_ff: int = 768,
                    n_head: int = 4, n_head_kv: int = 2) -> Path:
    rng = np.random.default_rng(seed)
    tokens = _byte_chars() + [a + b for a, b in MERGES] + SPECIALS
    types = [gguf.TokenType.NORMAL] * (len(tokens) - len(SPECIALS)) + [gguf.TokenType.CONTROL] * len(SPECIALS)
    n_vocab = len(tokens)
    head_dim = n_embd // n_head

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(4096)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(head_dim)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{a} {b}" for a, b in MERGES])
    w.add_eos_token_id(tokens.index("<|endoftext|>"))
    w.add_bos_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(False)

    def mat(rows: int, cols: int, scale: float) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * scale).astype(np.float16)

    def norm() -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(n_embd)).astype(np.float32)

    s = 1.0 / np.sqrt(n_embd)
    w.add_tensor("token_embd.weight", mat(n_vocab, n_embd, 1.0))
    for i in range(n_layer):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", norm())
        w.add_tensor(p + "attn_q.weight", mat(n_embd, n_embd, s))
        w.add_tensor(p + "attn_k.weight", mat(n_head_kv * head_dim, n_embd, s))
        w.add_tensor(p + "attn_v.weight", mat(n_head_kv * head_dim, n_embd, s))
        w.add_tensor(p + "attn_output.weight", mat(n_embd, n_embd, s))
        w.add_tensor(p + "ffn_norm.weight", norm())
        w.add_tensor(p + "ffn_gate.weight", mat(n_ff, n_embd, s))
        w.add_tensor(p + "ffn_up.weight", mat(n_ff, n_embd, s))
        w.add_tensor(p + "ffn_down.weight", mat(n_embd, n_ff, 1.0 / np.sqrt(n_ff)))
    w.add_tensor("output_norm.weight", norm())
    out = mat(n_vocab, n_embd, 0.12).astype(np.float32)
    out[tokens.index("<delegate>")] *= 2.5
    w.add_tensor("output.weight", out.astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
