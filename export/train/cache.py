"""Trained checkpoints cached by what produced them, so a rerun (a bench, a test) never retrains for nothing.

The key hashes the training settings, the source of every module that
shapes the data, the model or the written checkpoint, and the versions of
torch, tokenizers and espeak-ng. Entries live under
`~/.cache/venus-edge/trained/<variant>-<key>/` (`$VENUS_EDGE_CACHE` moves the
root); the spoken-clip bank sits next to them.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from export.errors import ExportError
from export.train.loop import TrainSettings, train
from export.train.voices import espeak_version

ROOT = Path(__file__).resolve().parents[2]
# Every file whose change can change the trained weights or the checkpoint written from them.
SOURCES = ("export/train/*.py", "export/tiny.py", "export/tiny_tokenizer.py", "export/special_tokens.py",
           "export/checkpoint.py", "export/torch_ref/audio.py", "export/torch_ref/vision.py",
           "export/torch_ref/tiny_parts.py", "export/torch_ref/weights.py", "export/torch_ref/token2wav_assets.py",
           "kernels/logmel.py", "kernels/image.py", "kernels/resample.py", "edge/protocol/*.py",
           "edge/bench/spoken.py", "edge/speech/piper/*.py")
# Modules under export/train that only measure or store a trained model, or hold the defaults (they reach the key
# through the resolved settings): a change to them keeps the cache.
NOT_SHAPING = ("export/train/bench.py", "export/train/score.py", "export/train/cache.py", "export/train/defaults.py")


def cache_root() -> Path:
    base = os.environ.get("VENUS_EDGE_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "venus-edge") / "trained"


def code_hash() -> str:
    h = hashlib.sha256()
    for pattern in SOURCES:
        for path in sorted(p for p in ROOT.glob(pattern) if str(p.relative_to(ROOT)) not in NOT_SHAPING):
            h.update(str(path.relative_to(ROOT)).encode())
            h.update(path.read_bytes())
    import tokenizers
    import torch

    h.update(f"{torch.__version__} {tokenizers.__version__} {espeak_version()}".encode())
    return h.hexdigest()


def cache_key(settings: TrainSettings) -> str:
    s = settings.resolved()
    blob = json.dumps(s.as_dict(), sort_keys=True) + code_hash()
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def entry(settings: TrainSettings) -> Path:
    return cache_root() / f"{settings.variant}-{cache_key(settings)}"


def cached(settings: TrainSettings) -> Path | None:
    """The cached checkpoint for these settings, or None."""
    ckpt = entry(settings) / "checkpoint"
    return ckpt if (ckpt / "train.json").is_file() else None


def trained_checkpoint(settings: TrainSettings, progress: bool = True, retrain: bool = False) -> Path:
    """The trained checkpoint for these settings: from the cache, or trained now and cached."""
    found = None if retrain else cached(settings)
    if found is not None:
        return found
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = entry(settings)
    init = None
    if settings.variant == "omni":  # Omni fine-tunes the Audio model, with the same seed, sizes and prompt
        init = trained_checkpoint(audio_settings(settings), progress)
    with tempfile.TemporaryDirectory(dir=root, prefix=".training-") as tmp:
        ckpt = Path(tmp) / "checkpoint"
        record = train(settings, ckpt, root, progress, init=init)
        record["key"] = cache_key(settings)
        (ckpt / "train.json").write_text(json.dumps(record, indent=2) + "\n")
        if final.exists():
            shutil.rmtree(final)
        final.mkdir(parents=True)
        (ckpt).rename(final / "checkpoint")
    return final / "checkpoint"


def audio_settings(settings: TrainSettings) -> TrainSettings:
    s = settings.resolved()
    return TrainSettings("audio", seed=s.seed, llm=s.llm, audio=s.audio, system_prompt=s.system_prompt)


def copy_checkpoint(src: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise ExportError(f"{out} is not empty; choose an empty directory for the trained checkpoint.")
    shutil.copytree(src, out, dirs_exist_ok=True)
