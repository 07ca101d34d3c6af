"""The media encoders of the chunk loop: streaming audio (log-mel -> ONNX with a K/V cache) and vision slices.

Audio graph contract (export/onnx/graphs.py): one chunk's log-mel (1, 80, T)
and the cache of the chunks before it; attention is bidirectional inside a
chunk and causal across chunks; the cache is reset before its positions would
pass the encoder's table. Vision: each slice of a frame gives 64 embeddings.
"""
from __future__ import annotations

import math

import numpy as np

from edge.backends.onnx import Runner
from kernels.image import slice_image
from kernels.logmel import log_mel


def _static(dim) -> int | None:
    return dim if isinstance(dim, int) else None


class AudioEncoder:
    def __init__(self, runner: Runner, input_shapes: dict[str, list], chunk_samples: int = 16000,
                 max_positions: int = 1500) -> None:
        self.run = runner
        past = input_shapes.get("past_kv") or []
        if len(past) != 6 or not all(_static(d) for d in (past[0], past[1], past[3], past[5])):
            raise ValueError(f"the audio graph's past_kv input has shape {past}; expected "
                             "(layers, 2, 1, heads, past, head_dim) with fixed layers, heads and head_dim")
        self.cache_shape = (past[0], past[1], 1, past[3], 0, past[5])
        self.chunk_samples = chunk_samples
        self.max_positions = max_positions
        self.reset()

    def reset(self) -> None:
        self.past = np.zeros(self.cache_shape, np.float32)
        self.resets = getattr(self, "resets", -1) + 1

    def mel(self, audio: np.ndarray) -> np.ndarray:
        """A chunk's log-mel; a short chunk (the end of a file) is padded with silence to a full chunk."""
        a = np.asarray(audio, np.float32).reshape(-1)
        if len(a) < self.chunk_samples:
            a = np.concatenate([a, np.zeros(self.chunk_samples - len(a), np.float32)])
        return log_mel(a)

    def encode_mel(self, mel: np.ndarray) -> np.ndarray:
        frames = mel.shape[-1]
        if self.past.shape[4] + math.ceil(frames / 2) > self.max_positions:
            self.reset()
        emb, self.past = self.run({"mel": mel.reshape(1, mel.shape[-2], frames).astype(np.float32),
                                   "past_kv": self.past})
        return emb[0]

    def encode(self, audio: np.ndarray) -> np.ndarray:
        """One chunk of 16 kHz audio -> (n, embed_dim) embeddings (10 per second)."""
        return self.encode_mel(self.mel(audio))


class VisionEncoder:
    def __init__(self, runner: Runner, scale: int = 448, patch: int = 14, max_slices: int = 9,
                 max_side: int = 980) -> None:
        self.run, self.scale, self.patch, self.max_slices, self.max_side = runner, scale, patch, max_slices, max_side

    def encode(self, image: np.ndarray) -> np.ndarray:
        """An RGB frame -> (64 * slices, embed_dim): the source view, then the grid slices."""
        views = slice_image(image, self.scale, self.patch, self.max_slices, self.max_side)
        return np.concatenate([self.run({"pixels": v})[0][0] for v in views], axis=0)
