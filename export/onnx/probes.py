"""Seeded inputs shaped like the runtime's: parity probes and INT8 calibration sets.

They are synthetic (smooth images, speech-like log-mel ranges) so that a build
needs no data download. For a production INT8 build, pass real slices and
recorded speech through `build_onnx_parts(..., calibration=...)`.
"""

from __future__ import annotations

import numpy as np
import torch

from export.torch_ref.audio import AudioEncoder
from export.torch_ref.vision import VisionEncoder

# Slice sizes in patches: a full 448 px slice and a smaller, non-square one.
VISION_SLICES = ((32, 32), (14, 20))
FIRST_CHUNK_FRAMES, CHUNK_FRAMES = 103, 100  # 1035 ms first chunk, then 1 s chunks of log-mel


def smooth_image(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A normalised (1, 3, H, W) image: blocky colour fields plus a gradient, values in [-1, 1]."""
    coarse = rng.uniform(-1, 1, (3, height // 14 + 1, width // 14 + 1))
    image = np.repeat(np.repeat(coarse, 14, axis=1), 14, axis=2)[:, :height, :width]
    ramp = np.linspace(-0.3, 0.3, width)[None, None, :]
    return np.clip(0.8 * image + ramp, -1, 1).astype(np.float32)[None]


def log_mel(rng: np.random.Generator, mels: int, frames: int) -> np.ndarray:
    """(1, mels, frames) values in Whisper's normalised log-mel range, smooth along time."""
    base = rng.uniform(-0.8, 1.0, (mels, frames // 5 + 1))
    mel = np.repeat(base, 5, axis=1)[:, :frames] + 0.1 * rng.standard_normal((mels, frames))
    return mel.astype(np.float32)[None]


def vision_feeds(module: VisionEncoder, seed: int, sizes=VISION_SLICES) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    side = module.side
    return [{"pixels": smooth_image(rng, min(h, side) * module.patch, min(w, side) * module.patch)}
            for h, w in sizes]


def audio_feeds(module: AudioEncoder, seed: int, chunks: int = 3) -> list[dict[str, np.ndarray]]:
    """Consecutive chunks of one stream, each with the cache the previous chunks leave."""
    rng = np.random.default_rng(seed)
    past = module.empty_cache()
    feeds = []
    for i in range(chunks):
        mel = log_mel(rng, module.mels, FIRST_CHUNK_FRAMES if i == 0 else CHUNK_FRAMES)
        feeds.append({"mel": mel, "past_kv": past.numpy()})
        with torch.no_grad():
            _, past = module(torch.from_numpy(mel), past)
    return feeds


def stream_inputs(seed: int, prompt_codes: int = 5, codes: int = 85, vocab: int = 6561):
    """A short synthetic voice prompt and codes for four windows (three full, a shorter last one).

    With a 5-code prompt the caches pass prompt + 100 frames after the third window, so the
    last window runs on trimmed caches: the whole streaming contract is exercised.
    """
    from export.torch_ref.token2wav_ref import StreamInputs

    rng = np.random.default_rng(seed)
    prompt = StreamInputs(rng.integers(0, vocab, prompt_codes),
                          (rng.standard_normal((2 * prompt_codes, 80)) * 2 - 6).astype(np.float32),
                          rng.standard_normal(192).astype(np.float32))
    return prompt, rng.integers(0, vocab, codes)
