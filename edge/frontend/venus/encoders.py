"""The media encoders of the chunk loop: streaming audio (log-mel -> ONNX with a K/V cache) and vision slices.

Audio graph contract (export/onnx/graphs.py): one block's log-mel (1, 80, T)
and the cache of the blocks before it; attention is bidirectional inside a
block and causal across blocks; ceil(T / 2) encoder steps pooled by
`pool_step` give the embeddings; the cache is reset before its positions would
pass the encoder's table.

The stream is cut into blocks of the checkpoint's `audio_chunk_length` (1 s,
what the model was trained on), whatever the chunk length of the session:
- a block is committed to the cache once all its samples are in: its log-mel
  (the 200 samples before it as left context, reflect padding at its end,
  floored 8 below its own maximum) goes through the graph and the cache grows;
- before that, the part of the block heard so far is encoded against the
  committed cache without keeping its keys/values, and the embeddings of the
  whole pooled steps it holds (one per 10 frames) are returned; the leftover
  frames wait for the next call.
Each embedding is returned once. So a second fed as two halves ends with the
same cache, and returns the same last five embeddings, as the whole second
fed at once; its first five are what the first half alone gives (measured
against the whole second in tests/edge/frontend/venus/test_venus_audio_stream.py).
Two differences from the reference's streaming front end, both at block
edges: its log-mel waits for real right context (its first chunk is 1035 ms),
where a block's last two frames here read reflect padding so the block commits
the moment its last sample is in; and it hands its convolutions one
neighbouring frame on each side, which the exported graph does not take (its
convolutions zero-pad at the block's edges).
Vision: each slice of a frame gives 64 embeddings.
"""
from __future__ import annotations

import math

import numpy as np

from edge.backends.onnx import Runner
from edge.bundle.runtime import AudioFacts
from kernels.image import slice_image
from kernels.logmel import HOP, N_FFT, block_log_mel


def _static(dim) -> int | None:
    return dim if isinstance(dim, int) else None


class AudioEncoder:
    def __init__(self, runner: Runner, input_shapes: dict[str, list], facts: AudioFacts) -> None:
        self.run = runner
        past = input_shapes.get("past_kv") or []
        if len(past) != 6 or not all(_static(d) for d in (past[0], past[1], past[3], past[5])):
            raise ValueError(f"the audio graph's past_kv input has shape {past}; expected "
                             "(layers, 2, 1, heads, past, head_dim) with fixed layers, heads and head_dim")
        self.cache_shape = (past[0], past[1], 1, past[3], 0, past[5])
        self.block_samples = facts.block_samples
        self.block_frames = facts.block_frames
        self.step_frames = 2 * facts.pool_step  # log-mel frames behind one embedding
        self.max_positions = facts.max_positions
        self.resets = 0  # cache resets at the end of the position table
        self.reset()

    def reset(self) -> None:
        """A new stream: empty cache, no audio held."""
        self.past = np.zeros(self.cache_shape, np.float32)
        self.block = np.zeros(0, np.float32)  # the current block's samples so far
        self.context: np.ndarray | None = None  # the samples before the current block
        self.emitted = 0  # embeddings of the current block already returned

    def _room(self) -> None:
        """At a block's start: reset the cache if the block would pass the position table."""
        # As the reference: reset once the cache and the block would reach the table's length.
        if self.past.shape[4] + math.ceil(self.block_frames / 2) >= self.max_positions:
            self.past = np.zeros(self.cache_shape, np.float32)
            self.resets += 1

    def _graph(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        emb, present = self.run({"mel": mel.reshape(1, mel.shape[-2], mel.shape[-1]).astype(np.float32),
                                 "past_kv": self.past})
        return emb[0], present

    def encode_mel(self, mel: np.ndarray) -> np.ndarray:
        """One whole block's log-mel through the graph, kept in the cache -> its embeddings."""
        self._room()
        emb, self.past = self._graph(mel)
        return emb

    def encode(self, audio: np.ndarray) -> np.ndarray:
        """16 kHz audio of any length -> (n, embed_dim) embeddings of the whole pooled steps heard so far
        and not returned before (n may be 0)."""
        a = np.asarray(audio, np.float32).reshape(-1)
        out: list[np.ndarray] = []
        while len(a):
            if not len(self.block):
                self._room()  # once per block, so its partial and whole encodings see the same cache
            take = self.block_samples - len(self.block)
            self.block, a = np.concatenate([self.block, a[:take]]), a[take:]
            if len(self.block) == self.block_samples:  # commit the block
                emb, self.past = self._graph(block_log_mel(self.block, self.context))
                out.append(emb[self.emitted:])
                self.context, self.block, self.emitted = self.block[-(N_FFT // 2):], self.block[:0], 0
        out.append(self._partial())
        rows = [o for o in out if len(o)]
        return np.concatenate(rows) if rows else np.zeros((0, 0), np.float32)

    def _partial(self) -> np.ndarray:
        """The partial block's whole pooled steps not returned yet, encoded without keeping their cache."""
        steps = math.ceil(len(self.block) // HOP / 2) // (self.step_frames // 2)
        if steps <= self.emitted:
            return np.zeros((0, 0), np.float32)
        emb, _ = self._graph(block_log_mel(self.block, self.context))
        new, self.emitted = emb[self.emitted:steps], steps
        return new


class VisionEncoder:
    def __init__(self, runner: Runner, scale: int = 448, patch: int = 14, max_slices: int = 9,
                 max_side: int = 980) -> None:
        self.run, self.scale, self.patch, self.max_slices, self.max_side = runner, scale, patch, max_slices, max_side

    def encode(self, image: np.ndarray) -> np.ndarray:
        """An RGB frame -> (64 * slices, embed_dim): the source view, then the grid slices."""
        views = slice_image(image, self.scale, self.patch, self.max_slices, self.max_side)
        return np.concatenate([self.run({"pixels": v})[0][0] for v in views], axis=0)
