"""Synthetic camera frames for Omni sessions: one coloured shape on a grey background, with sensor noise.

A scene is drawn in relative coordinates, so one scene renders at any frame
size; the answer to "what colour is this?" is the shape's colour name.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from export.train.script import COLOURS, SHAPES


@dataclass(frozen=True)
class Scene:
    colour: str
    shape: str
    cx: float  # centre, as a fraction of the width / height
    cy: float
    size: float  # half-extent as a fraction of the shorter side
    background: int  # grey level


def random_scene(rng: np.random.Generator, avoid: Scene | None = None) -> Scene:
    names = [c for c in COLOURS if avoid is None or c != avoid.colour]
    return Scene(names[int(rng.integers(len(names)))], SHAPES[int(rng.integers(len(SHAPES)))],
                 float(rng.uniform(0.35, 0.65)), float(rng.uniform(0.35, 0.65)), float(rng.uniform(0.25, 0.42)),
                 int(rng.integers(90, 170)))


def render(scene: Scene, size: tuple[int, int], seed: int = 0) -> np.ndarray:
    """An HxWx3 uint8 RGB frame of the scene; `seed` picks the noise."""
    h, w = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    side = min(h, w)
    dx, dy = (xx - scene.cx * w) / (scene.size * side), (yy - scene.cy * h) / (scene.size * side)
    if scene.shape == "circle":
        inside = dx * dx + dy * dy <= 1.0
    elif scene.shape == "square":
        inside = (np.abs(dx) <= 0.85) & (np.abs(dy) <= 0.85)
    else:  # triangle, apex up
        inside = (dy <= 0.9) & (dy >= -1.0) & (np.abs(dx) <= (dy + 1.0) / 1.9)
    img = np.full((h, w, 3), scene.background, np.float32)
    img[inside] = COLOURS[scene.colour]
    noise = np.random.default_rng(seed).normal(0.0, 4.0, img.shape)
    return np.clip(np.round(img + noise), 0, 255).astype(np.uint8)


@functools.lru_cache(maxsize=4)
def scene_pool(seed: int, n: int) -> tuple[Scene, ...]:
    """n scenes drawn once from `seed`: training sessions that show only these let the frozen tower's output for
    each be computed once and reused (export/train/batch.py)."""
    rng = np.random.default_rng([seed, 17])
    return tuple(random_scene(rng) for _ in range(n))
