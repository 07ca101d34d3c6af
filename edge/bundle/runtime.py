"""The checkpoint facts a bundle carries for the device: the manifest's `runtime` section, checked.

The exporter (export/runtime_config.py) resolves them at build time, so a bundle
runs with the right audio chunking, vision slicing and TTS ids where the source
checkpoint is not. A bundle without them is refused rather than run on guesses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class RuntimeConfigError(ValueError):
    """The manifest's runtime section is missing or malformed; the message is one sentence."""


@dataclass(frozen=True)
class AudioFacts:
    sample_rate: int
    mel_bins: int
    chunk_seconds: float  # the encoder's block: attention is bidirectional inside it, causal across blocks
    pool_step: int
    max_positions: int

    @property
    def block_frames(self) -> int:
        """Log-mel frames of one encoder block (100 a second)."""
        return round(self.chunk_seconds * 100)

    @property
    def block_samples(self) -> int:
        return round(self.chunk_seconds * self.sample_rate)


@dataclass(frozen=True)
class VisionFacts:
    scale_resolution: int
    patch_size: int
    max_slices: int
    max_side: int


@dataclass(frozen=True)
class TTSFacts:
    text_eos_id: int
    audio_bos_id: int
    normalize_projected_hidden: bool


@dataclass(frozen=True)
class RuntimeConfig:
    audio: AudioFacts | None
    vision: VisionFacts | None
    tts: TTSFacts | None


REBUILD = "rebuild it with this venus-export build"


def _section(runtime: dict, name: str, cls: type, fields: dict[str, type]) -> Any:
    data = runtime.get(name)
    if data is None:
        return None
    try:
        return cls(**{k: t(data[k]) for k, t in fields.items()})
    except (KeyError, TypeError, ValueError):
        raise RuntimeConfigError(f"the manifest's runtime.{name} section lacks or mistypes one of "
                                 f"{', '.join(fields)}; {REBUILD}.") from None


def read_runtime(manifest: dict) -> RuntimeConfig:
    runtime = manifest.get("runtime")
    if not isinstance(runtime, dict):
        raise RuntimeConfigError("the bundle's manifest has no runtime section (the checkpoint settings the device "
                                 f"needs), so it came from an older exporter; {REBUILD}.")
    audio = _section(runtime, "audio", AudioFacts, {"sample_rate": int, "mel_bins": int, "chunk_seconds": float,
                                                     "pool_step": int, "max_positions": int})
    vision = _section(runtime, "vision", VisionFacts, {"scale_resolution": int, "patch_size": int,
                                                       "max_slices": int, "max_side": int})
    tts = _section(runtime, "tts", TTSFacts, {"text_eos_id": int, "audio_bos_id": int,
                                              "normalize_projected_hidden": bool})
    if audio is not None and (audio.block_frames <= 0 or audio.block_frames % (2 * audio.pool_step)):
        raise RuntimeConfigError(f"the manifest's audio block of {audio.chunk_seconds} s is not a whole number of "
                                 f"pooled encoder steps (multiples of {2 * audio.pool_step} frames); {REBUILD}.")
    return RuntimeConfig(audio, vision, tts)
