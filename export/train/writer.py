"""A trained tiny checkpoint in the real layout: `venus-export tiny`'s files with the trained tensors.

The tokenizer, config, TTS and token2wav assets are the seeded tiny ones (the
TTS is not trained here); the LLM and the media encoders are replaced by the
trained values, stored as bf16 shards like a real checkpoint. `train.json`
records the settings and the cache key that produced it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.tiny import write_shards, write_tiny


def write_trained(out: Path, variant: str, seed: int, llm: dict, audio: dict, trained: dict[str, np.ndarray],
                  record: dict) -> None:
    write_tiny(out, variant, seed, llm=llm, audio=audio)
    reader = CheckpointReader(out)
    tensors = {n: reader.get(n) for n in reader.names()}
    unknown = sorted(set(trained) - set(tensors))
    if unknown:
        raise ExportError(f"Trained tensor(s) {', '.join(unknown[:3])} are not in the tiny layout; "
                          "the training code and export/tiny.py disagree.")
    for name, value in trained.items():
        if tensors[name].shape != value.shape:
            raise ExportError(f"Trained tensor {name} has shape {value.shape}, the layout {tensors[name].shape}.")
        tensors[name] = value.astype(np.float32)
    for shard in reader.shards:
        shard.unlink()
    write_shards(out, tensors, 4 << 20)
    (out / "train.json").write_text(json.dumps(record, indent=2) + "\n")
