"""The frame gate: the C block matcher equals the NumPy one, and the decisions a user would notice."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from kernels.block_match import backend, match, match_reference
from kernels.gate import Gate, GateSettings, to_gray


def scene(word: str, tint: tuple[int, int, int], seed: int, shape: int = 360) -> np.ndarray:
    """A textured room with a printed word: enough structure for motion matching to lock on."""
    rng = np.random.default_rng(seed)
    img = np.empty((shape, shape * 16 // 9, 3), np.uint8)
    img[:] = tint
    for _ in range(40):
        x, y = (int(v) for v in rng.integers(0, img.shape[1], 2))
        cv2.rectangle(img, (x, y % shape), (x + 60, y % shape + 40), tuple(int(c) for c in rng.integers(0, 255, 3)), -1)
    cv2.putText(img, word, (80, shape // 2), cv2.FONT_HERSHEY_SIMPLEX, 2.2, (20, 20, 20), 6)
    return img


def noisy(img: np.ndarray, rng: np.random.Generator, sigma: float = 2.0) -> np.ndarray:
    return np.clip(img + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8)


def shifted(img: np.ndarray, dy: int, dx: int) -> np.ndarray:
    return cv2.warpAffine(img, np.float32([[1, 0, dx], [0, 1, dy]]), img.shape[1::-1], borderMode=cv2.BORDER_REFLECT)


@pytest.mark.parametrize("size,block,radius,dy,dx", [(128, 16, 10, 3, -5), (96, 8, 7, 0, 0), (256, 16, 20, -9, 4)])
def test_the_compiled_matcher_equals_the_reference_bit_for_bit(size, block, radius, dy, dx):
    rng = np.random.default_rng(size)
    ref = to_gray(scene("PARITY", (200, 180, 160), 1), size)
    cur = to_gray(noisy(shifted(scene("PARITY", (200, 180, 160), 1), dy * 3, dx * 3), rng), size)
    fast, slow = match(ref, cur, block, radius, 0.01), match_reference(ref, cur, block, radius, 0.01)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype == np.int32
        np.testing.assert_array_equal(a, b)


def test_the_compiled_matcher_is_the_one_that_runs_here():
    assert backend() == "c"  # CI machines have gcc; a silent fall back to NumPy would be 100x slower


def test_a_camera_pan_is_found_as_motion():
    rng = np.random.default_rng(5)
    # A smooth texture, as camera images are: the hexagon walks downhill on its error surface.
    big = cv2.normalize(cv2.GaussianBlur(rng.random((600, 600)), (0, 0), 6), None, 0, 255, cv2.NORM_MINMAX)
    big = big.astype(np.uint8)
    ref, cur = np.ascontiguousarray(big[40:552, 40:552]), np.ascontiguousarray(big[46:558, 35:547])
    sad, dy, dx = match(ref, cur)
    inner = (slice(1, -1), slice(1, -1))  # border blocks may have no source inside the frame
    assert (dy[inner] == 6).mean() > 0.9 and (dx[inner] == -5).mean() > 0.9  # a fast search, not a full one
    assert (sad[inner] == 0).mean() > 0.9


def run(gate: Gate, frames: list[np.ndarray]) -> list[str]:
    return [gate.step(f).kind for f in frames]


def test_a_static_scene_is_thinned_to_one_frame_in_five():
    rng = np.random.default_rng(0)
    base = scene("STILL", (180, 190, 200), 3)
    kinds = run(Gate(), [noisy(base, rng) for _ in range(41)])
    # Four drops, then a keep; after the key interval (32) a kept frame is marked as the new anchor.
    cycle = ["drop"] * 4 + ["keep"]
    assert kinds == ["anchor"] + cycle * 6 + ["drop"] * 4 + ["anchor"] + cycle + ["drop"] * 0
    assert sum(k != "drop" for k in kinds[1:]) / 40 <= 0.2


def test_lighting_and_shake_are_not_new_scenes_but_a_new_scene_is():
    rng = np.random.default_rng(1)
    base = scene("LAMP", (150, 160, 170), 4)
    gate = Gate()
    gate.step(base)
    darker = noisy(cv2.convertScaleAbs(base, alpha=0.6, beta=10), rng)
    assert gate.step(darker).kind != "anchor"
    shaken = noisy(shifted(base, 7, -9), rng)
    assert gate.step(shaken).kind != "anchor"
    other = noisy(scene("ZEBRA", (60, 90, 40), 5), rng)
    decision = gate.step(other)
    assert decision.kind == "anchor" and decision.reason == "cost"


def test_a_small_local_change_is_kept():
    rng = np.random.default_rng(2)
    base = scene("", (200, 200, 200), 6)
    gate = Gate()
    gate.step(noisy(base, rng))
    visitor = base.copy()  # someone steps into a corner: a few blocks change a lot, the rest not at all
    cv2.circle(visitor, (560, 200), 22, (30, 30, 40), -1)
    cv2.ellipse(visitor, (560, 290), (34, 60), 0, 0, 360, (40, 40, 60), -1)
    decision = gate.step(noisy(visitor, rng))
    assert decision.kind == "keep" and decision.reason == "local", decision


def test_the_gate_decides_the_same_with_either_matcher():
    rng = np.random.default_rng(3)
    base, other = scene("SAME", (120, 130, 140), 7), scene("OTHER", (30, 200, 90), 8)
    frames = [noisy(shifted(base, int(rng.integers(-4, 5)), int(rng.integers(-4, 5))), rng) for _ in range(4)]
    frames += [noisy(other, rng) for _ in range(3)]
    settings = GateSettings(size=128, block=16)
    a, b = Gate(settings), Gate(settings, matcher=match_reference)
    assert [a.step(f) for f in frames] == [b.step(f) for f in frames]


def test_bad_settings_and_frames_are_named():
    with pytest.raises(ValueError, match="multiple of the block size"):
        Gate(GateSettings(size=500))
    with pytest.raises(ValueError, match="1, 3 or 4 channels"):
        Gate().step(np.zeros((10, 10, 2), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        match(np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32))
