"""Rows of a GGUF's token-embedding table, read without loading the model twice.

Feeding a token's embedding row gives the same logits as feeding its id, so a
chunk's protocol tokens and media embeddings can go to llama.cpp as one batch
(one decode call per chunk instead of one per section). Quantized tables are
dequantized with gguf-py's NumPy kernels; a type they do not cover returns
None and the caller decodes section by section.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


def token_rows(gguf_path: Path, ids: list[int]) -> np.ndarray | None:
    try:
        import gguf
        from gguf import quants
    except ImportError:
        return None
    reader = gguf.GGUFReader(str(gguf_path))
    table = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if table is None:
        return None
    data = table.data  # (n_vocab, row) in the file's type (a memory map)
    rows = np.asarray(data[np.asarray(ids, np.int64)])
    try:
        if table.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            out = rows.astype(np.float32)
        else:
            out = quants.dequantize(rows, table.tensor_type).astype(np.float32)
    except (NotImplementedError, ValueError, KeyError) as exc:
        log.info("venus: token rows of type %s cannot be read here (%s); prefilling section by section",
                 table.tensor_type.name, exc)
        return None
    return out.reshape(len(ids), -1)
