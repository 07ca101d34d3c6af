"""Filling reference modules from checkpoint tensors, by checkpoint name."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from export.errors import ExportError

TensorGetter = Callable[[str], np.ndarray]


def fetch(get: TensorGetter, name: str, shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """One checkpoint tensor as float32 torch, with a clear error when it is absent or misshapen."""
    try:
        array = get(name)
    except KeyError as exc:
        raise ExportError(f"The checkpoint has no tensor {name}, which the reference module needs.") from exc
    tensor = torch.from_numpy(np.ascontiguousarray(np.asarray(array, dtype=np.float32)))
    if shape is not None and tuple(tensor.shape) != tuple(shape):
        raise ExportError(f"Tensor {name} has shape {tuple(tensor.shape)} where {tuple(shape)} was expected.")
    return tensor


def load_module(module: nn.Module, get: TensorGetter, prefix: str, rename: dict[str, str] | None = None) -> None:
    """Copy `prefix + local name` tensors into every parameter of `module` (shapes checked).

    `rename` maps a local parameter name to its checkpoint suffix where the two differ.
    """
    rename = rename or {}
    with torch.no_grad():
        for local, param in module.named_parameters():
            source = prefix + rename.get(local, local)
            param.copy_(fetch(get, source, tuple(param.shape)))


def has_tensor(get: TensorGetter, name: str) -> bool:
    """Whether the checkpoint holds `name` (used to tell Omni from Audio checkpoints)."""
    try:
        get(name)
    except (KeyError, ExportError):
        return False
    return True
