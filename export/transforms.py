"""Tensor transforms named by the name tables (export.names): pure numpy, one tensor at a time."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def rope_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """Reorder q/k rows from the rotate-half rope layout (HF Llama) to llama.cpp's interleaved one.

    Within each head, the rows of the first and second half are interleaved, so
    that llama.cpp's pairwise rotation of (2j, 2j+1) equals HF's (j, j + d/2).
    """
    out_dim = w.shape[0]
    return w.reshape(n_head, 2, out_dim // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def fold_weight_norm(g: np.ndarray, v: np.ndarray) -> np.ndarray:
    """W = g * v / ||v||, the norm taken per output row (torch weight_norm with dim=0)."""
    v64 = v.astype(np.float64)
    norm = np.sqrt((v64 * v64).sum(axis=tuple(range(1, v.ndim)), keepdims=True))
    return (g.reshape((-1,) + (1,) * (v.ndim - 1)).astype(np.float64) * v64 / norm).astype(np.float32)


Transform = Callable[..., np.ndarray]


def transforms_for(n_head: int, n_head_kv: int) -> dict[str, Transform]:
    """The transform table for one model: key (as in the name tables) to a function of the sources."""
    return {
        "copy": lambda w: w,
        "rope_permute_q": lambda w: rope_permute(w, n_head),
        "rope_permute_k": lambda w: rope_permute(w, n_head_kv),
        "fold_weight_norm": fold_weight_norm,
    }
