"""Image slicing and normalisation for the vision tower (MiniCPM-V style slicing).

A frame becomes a source view resized to about `scale`² pixels, plus, when
the frame is larger than that and `max_slices` > 1, a grid of slices. Every
view keeps its aspect ratio, has sides that are multiples of the patch size,
and is normalised to (x / 255 - 0.5) / 0.5, channels first.
"""
from __future__ import annotations

import math

import numpy as np


def _fit(width: int, height: int, scale: int, patch: int, allow_upscale: bool) -> tuple[int, int]:
    """A size of about scale² pixels with the same aspect ratio, sides rounded to the patch size."""
    if width * height > scale * scale or allow_upscale:
        r = width / height
        height = int(scale / math.sqrt(r))
        width = int(height * r)
    return max(patch, round(width / patch) * patch), max(patch, round(height / patch) * patch)


def grid_for(width: int, height: int, scale: int, max_slices: int) -> tuple[int, int]:
    """(columns, rows) of the slice grid; (1, 1) means the source view alone."""
    ratio = width * height / (scale * scale)
    multiple = min(math.ceil(ratio), max_slices)
    if multiple <= 1:
        return 1, 1
    log_ratio = math.log(width / height)
    best, best_err = (1, 1), float("inf")
    for n in (multiple - 1, multiple, multiple + 1):
        if n <= 1 or n > max_slices:
            continue
        for cols in range(1, n + 1):
            if n % cols:
                continue
            err = abs(log_ratio - math.log(cols / (n // cols)))
            if err < best_err:
                best, best_err = (cols, n // cols), err
    return best


def resize(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Bilinear resize of an HxWx3 uint8 image (half-pixel centres), returns float32."""
    h0, w0 = image.shape[:2]
    ys = np.clip((np.arange(height) + 0.5) * h0 / height - 0.5, 0, h0 - 1)
    xs = np.clip((np.arange(width) + 0.5) * w0 / width - 0.5, 0, w0 - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h0 - 1), np.minimum(x0 + 1, w0 - 1)
    wy, wx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]
    img = image.astype(np.float32)
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return top * (1 - wy) + bottom * wy


def normalise(view: np.ndarray) -> np.ndarray:
    """HxWx3 float in 0..255 -> (1, 3, H, W) float32 in [-1, 1]."""
    return ((view / 255.0 - 0.5) / 0.5).astype(np.float32).transpose(2, 0, 1)[None].copy()


def slice_image(image: np.ndarray, scale: int = 448, patch: int = 14, max_slices: int = 9,
                max_side: int | None = None) -> list[np.ndarray]:
    """An RGB uint8 frame -> normalised views: the source view first, then the grid slices row by row."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"a frame must be HxWx3 uint8 RGB; got shape {image.shape} of {image.dtype}")
    height, width = image.shape[:2]
    if height < 2 or width < 2:
        raise ValueError(f"a frame of {width}x{height} pixels is too small to slice")
    cols, rows = grid_for(width, height, scale, max(1, max_slices))
    sw, sh = _fit(width, height, scale, patch, allow_upscale=cols * rows == 1)
    views = [resize(image, sw, sh)]
    if cols * rows > 1:
        cw, ch = _fit(width // cols, height // rows, scale, patch, allow_upscale=True)
        grid = resize(image, cw * cols, ch * rows)
        views += [grid[r * ch:(r + 1) * ch, c * cw:(c + 1) * cw] for r in range(rows) for c in range(cols)]
    if max_side is not None:
        for v in views:
            if max(v.shape[:2]) > max_side:
                raise ValueError(f"a slice of {v.shape[1]}x{v.shape[0]} exceeds the tower's {max_side} pixels")
    return [normalise(v) for v in views]
