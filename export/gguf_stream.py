"""Write a GGUF one tensor at a time, each tensor in row blocks, with gguf's GGUFWriter.

The writer is given every tensor's name, shape and type first (no data), then
its header, key-values and tensor table are written, then each tensor's data
is produced and written block by block, so peak memory stays near one block
(or one tensor, for transforms that need the whole tensor) and never the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol
from pathlib import Path

import numpy as np
from gguf import GGUFWriter, LlamaFileType
from tqdm import tqdm

from export.errors import ExportError


@dataclass
class PlannedTensor:
    """A GGUF tensor to write: numpy-order shape, output dtype, and a producer of its row blocks."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    blocks: Callable[[], Iterator[np.ndarray]]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


def write_streamed(writer: GGUFWriter, tensors: list[PlannedTensor], desc: str, progress: bool = True) -> int:
    """Write all key-values already added to `writer`, then the tensors; returns the bytes of tensor data."""
    for t in tensors:
        writer.add_tensor_info(t.name, t.shape, np.dtype(t.dtype), t.nbytes)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    assert writer.fout is not None and len(writer.fout) == 1, "split GGUF output is not used here"
    fout = writer.fout[0]
    total = sum(t.nbytes for t in tensors)
    with tqdm(total=total, desc=desc, unit="B", unit_scale=True, disable=not progress, leave=False) as bar:
        for t in tensors:
            writer.write_padding(fout, fout.tell())
            written = 0
            for block in t.blocks():
                block = np.ascontiguousarray(block, dtype=t.dtype)
                if block.dtype == np.float16 and not np.isfinite(block).all():
                    raise ExportError(f"Tensor {t.name} has values beyond float16's range, "
                                      "so it cannot be written as F16.")
                block.tofile(fout)
                written += block.nbytes
                bar.update(block.nbytes)
            if written != t.nbytes:
                raise ExportError(f"Tensor {t.name} produced {written} bytes where its shape {t.shape} "
                                  f"needs {t.nbytes}.")
            writer.write_padding(fout, written)
    writer.close()
    return total


class TransformerShape(Protocol):
    context: int
    hidden: int
    n_layers: int
    ffn: int
    n_head: int
    n_head_kv: int
    rope_theta: float
    rms_eps: float


def add_transformer_shape(w: GGUFWriter, p: TransformerShape) -> None:
    """The hyper-parameters every llama.cpp decoder loader (llama, qwen3) reads, for an F16 file."""
    w.add_file_type(LlamaFileType.MOSTLY_F16)
    w.add_context_length(p.context)
    w.add_embedding_length(p.hidden)
    w.add_block_count(p.n_layers)
    w.add_feed_forward_length(p.ffn)
    w.add_head_count(p.n_head)
    w.add_head_count_kv(p.n_head_kv)
    w.add_rope_freq_base(p.rope_theta)
    w.add_layer_norm_rms_eps(p.rms_eps)


def transformer_facts(arch: str, p: TransformerShape) -> dict:
    """The decoder's shape as the manifest records it, for an LLM and a TTS alike (each adds its own after)."""
    return {"arch": arch, "n_layers": p.n_layers, "hidden": p.hidden, "n_head": p.n_head, "n_head_kv": p.n_head_kv}


def open_writer(path: Path, arch: str) -> GGUFWriter:
    path.parent.mkdir(parents=True, exist_ok=True)
    return GGUFWriter(path, arch)
