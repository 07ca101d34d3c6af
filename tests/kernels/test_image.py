"""Image slicing and normalisation for the vision tower."""
from __future__ import annotations

import numpy as np
import pytest

from kernels.image import grid_for, normalise, resize, slice_image


@pytest.mark.parametrize("h,w,views", [(100, 120, 1), (480, 640, 3), (1080, 1920, 9), (448, 448, 1)])
def test_views_are_patch_multiples_near_the_scale(h, w, views):
    out = slice_image(np.zeros((h, w, 3), np.uint8))
    assert len(out) == views
    for v in out:
        assert v.shape[:2] == (1, 3) and v.dtype == np.float32
        assert v.shape[2] % 14 == 0 and v.shape[3] % 14 == 0
        assert 0.5 * 448 ** 2 <= v.shape[2] * v.shape[3] <= 1.5 * 448 ** 2
    src = out[0]
    assert abs(src.shape[3] / src.shape[2] - w / h) < 0.1  # the source view keeps the aspect ratio


def test_grid_follows_the_aspect_ratio_and_the_slice_cap():
    assert grid_for(640, 480, 448, 9) == (2, 1)
    assert grid_for(480, 1200, 448, 9) == (1, 3)
    assert grid_for(1920, 1080, 448, 1) == (1, 1)


def test_normalisation_and_resize():
    img = np.zeros((4, 4, 3), np.uint8)
    img[:, :, 0] = 255
    v = normalise(img.astype(np.float32))
    assert v[0, 0].min() == 1.0 and v[0, 1].max() == -1.0
    grad = np.tile(np.arange(0, 256, 16, dtype=np.uint8)[None, :, None], (4, 1, 3))
    r = resize(grad, 32, 4)
    assert np.all(np.diff(r[0, :, 0]) >= 0) and r.min() >= 0 and r.max() <= 255
    np.testing.assert_allclose(resize(grad, 16, 4), grad.astype(np.float32))


def test_bad_frames_are_refused_with_a_sentence():
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        slice_image(np.zeros((10, 10), np.uint8))
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        slice_image(np.zeros((10, 10, 3), np.float32))
    with pytest.raises(ValueError, match="too small"):
        slice_image(np.zeros((1, 10, 3), np.uint8))
    with pytest.raises(ValueError, match="exceeds"):
        slice_image(np.zeros((448, 448, 3), np.uint8), max_side=100)
