"""Sessions to training tensors, with the runtime's own feature code.

Audio: each chunk is packed to 16-bit PCM and back (as capture sends it),
then kernels.logmel.block_log_mel per 1 s chunk with the chunk before it as
left context (what the runtime's AudioEncoder computes when a block commits).
Frames: kernels.image.slice_image with the checkpoint's slicing settings
(the call VisionEncoder.encode makes). Tokens: export.train.sequence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from export.train import script
from export.train.frames import Scene, render
from export.train.sequence import IGNORE, Layout, Tokens, build_layout
from export.train.session import Session
from kernels.image import slice_image
from kernels.logmel import block_log_mel
from kernels.resample import float_to_pcm16, pcm16_to_float


def stream_mels(chunks: list[np.ndarray]) -> np.ndarray:
    """(len(chunks), 80, frames): each chunk's log-mel exactly as the runtime computes it from what capture sends,
    the chunk before it as left context."""
    heard = [pcm16_to_float(float_to_pcm16(c)) for c in chunks]
    return np.stack([block_log_mel(c, heard[k - 1] if k else None) for k, c in enumerate(heard)])


@dataclass
class Slicing:
    scale: int = 448
    patch: int = 14
    max_slices: int = 9
    max_side: int = 980

    @classmethod
    def from_config(cls, config: dict) -> "Slicing":
        vc = config.get("vision_config") or {}
        return cls(int(config.get("scale_resolution", 448)), int(config.get("patch_size", 14)),
                   int(config.get("max_slice_nums", 9)), int(vc.get("image_size", 980)))

    def views(self, frame: np.ndarray) -> list[np.ndarray]:
        return slice_image(frame, self.scale, self.patch, self.max_slices, self.max_side)


@dataclass
class Batch:
    mel: torch.Tensor  # (B, C, 80, 100)
    ids: torch.Tensor  # (B, L) with media placeholders
    targets: torch.Tensor  # (B, L)
    weights: torch.Tensor  # (B, L)
    kinds: torch.Tensor  # (B, L)
    layouts: list[Layout]
    views: list[torch.Tensor]  # unique normalised slices (1, 3, H, W)
    image_index: list[list[tuple[np.ndarray, list[int]]]]  # per session: (positions, view ids in order)
    asked: list[tuple[int, int, int, int]]  # (session, first chunk of the question, answer chunk, question number)
    view_keys: list[tuple] = field(default_factory=list)  # per view: (scene, frame size, noise seed, slice)


class FrameCache:
    """The slices and the frozen tower's outputs of frames a training run shows again (Mix.frame_pool): each is
    computed once. Only for a tower that does not learn; the resampler after it still runs every step."""

    def __init__(self) -> None:
        self.slices: dict[tuple, list[np.ndarray]] = {}
        self.towers: dict[tuple, torch.Tensor] = {}

    def views(self, scene: Scene, size: tuple[int, int], seed: int, slicing: Slicing) -> list[np.ndarray]:
        key = (scene, size, seed)
        if key not in self.slices:
            self.slices[key] = slicing.views(render(scene, size, seed))
        return self.slices[key]

    def tower(self, key: tuple, run: Callable[[], torch.Tensor]) -> torch.Tensor:
        if key not in self.towers:
            with torch.no_grad():
                self.towers[key] = run()
        return self.towers[key]


def session_views(session: Session, slicing: Slicing, cache: FrameCache | None = None
                  ) -> tuple[list[np.ndarray], list[list[int]], list[tuple]]:
    """The distinct frames' slices, per chunk the slice ids of its frame (frames repeat while a scene lasts), and
    per slice its key in `cache`."""
    views: list[np.ndarray] = []
    per_chunk: list[list[int]] = []
    keys: list[tuple] = []
    seen: dict[object, list[int]] = {}
    for k in range(session.n_chunks):
        scene = session.scenes[k] if session.scenes else None
        if scene is None:
            per_chunk.append([])
            continue
        if scene not in seen:
            vs = (cache.views(scene, session.frame_size, session.frame_seed, slicing) if cache is not None
                  else slicing.views(session.frame(k)))
            seen[scene] = list(range(len(views), len(views) + len(vs)))
            views += vs
            keys += [(scene, session.frame_size, session.frame_seed, i) for i in range(len(vs))]
        per_chunk.append(seen[scene])
    return views, per_chunk, keys


def make_batch(sessions: list[Session], tok: Tokens, system_ids: list[int], audio_per_chunk: int,
               slicing: Slicing | None, answer_weight: float = 3.0, cache: FrameCache | None = None) -> Batch:
    mels, layouts, all_views, image_index, asked, view_keys = [], [], [], [], [], []
    keys = [q.key for q in script.questions(sessions[0].variant)] if sessions else []
    for si, s in enumerate(sessions):
        asked += [(si, int(s.events[t.question].start_s), t.first, keys.index(t.key))
                  for t in s.turns if t.kind in ("reply", "delegate")]
        mels.append(stream_mels([s.chunk_audio(k) for k in range(s.n_chunks)]))
        views, per_chunk, vkeys = session_views(s, slicing, cache) if slicing is not None else ([], [], [])
        offset = len(all_views)
        all_views += views
        view_keys += vkeys
        layout = build_layout(s.plan, tok, system_ids, audio_per_chunk, [len(v) for v in per_chunk],
                              answer_weight=answer_weight)
        layouts.append(layout)
        image_index.append([(pos, [offset + i for i in per_chunk[k]]) for k, pos in layout.image_pos])
    n = max(len(l.ids) for l in layouts)
    ids = np.zeros((len(sessions), n), np.int64)
    targets = np.full((len(sessions), n), IGNORE, np.int64)
    weights = np.zeros((len(sessions), n), np.float32)
    kinds = np.zeros((len(sessions), n), np.int8)
    for i, l in enumerate(layouts):
        ids[i, :len(l.ids)] = l.ids
        targets[i, :len(l.ids)] = l.targets
        weights[i, :len(l.ids)] = l.weights
        kinds[i, :len(l.ids)] = l.kinds
    return Batch(torch.from_numpy(np.stack(mels)), torch.from_numpy(ids), torch.from_numpy(targets),
                 torch.from_numpy(weights), torch.from_numpy(kinds), layouts, [torch.from_numpy(v) for v in all_views],
                 image_index, asked, view_keys)
