"""Block motion matching: each block of a frame is predicted from a reference frame.

Per block it returns the sum of absolute differences of the best prediction and its
displacement. The search: a large hexagon walks from (0, 0) until its centre is the cheapest
point (at most `radius` steps), then its eight neighbours refine it; the cost of a
displacement is  sad / (block² · 255) + penalty · (|dy| + |dx|) / radius,  so motion only wins
when it buys a better prediction. `match_reference` is plain NumPy; `match` runs the same
search in a small C kernel (block_match.c), compiled once per machine into the user's cache
and falling back to the reference when no C compiler is there.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

LARGE = ((-2, 0), (-1, 2), (1, 2), (2, 0), (1, -2), (-1, -2))
SMALL = ((-1, 0), (0, -1), (0, 1), (1, 0), (-1, -1), (-1, 1), (1, -1), (1, 1))
SOURCE = Path(__file__).with_name("block_match.c")


def _check(ref: np.ndarray, cur: np.ndarray, block: int, radius: int) -> None:
    if ref.shape != cur.shape or ref.ndim != 2:
        raise ValueError(f"block matching needs two grayscale frames of one size, got {ref.shape} and {cur.shape}")
    if ref.dtype != np.uint8 or cur.dtype != np.uint8:
        raise ValueError("block matching needs uint8 frames; convert them with np.uint8 first")
    if block < 1 or radius < 1 or ref.shape[0] < block or ref.shape[1] < block:
        raise ValueError(f"block {block} and radius {radius} must be positive and the frame at least one block")


def match_reference(ref: np.ndarray, cur: np.ndarray, block: int = 16, radius: int = 41,
                    penalty: float = 0.01) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sad, dy, dx), each int32 of shape (rows, cols) of blocks, by the plain NumPy search."""
    _check(ref, cur, block, radius)
    h, w = ref.shape
    rows, cols = h // block, w // block
    sad = np.zeros((rows, cols), np.int32)
    dys, dxs = np.zeros_like(sad), np.zeros_like(sad)
    ref32 = ref.astype(np.int32)
    scale = float(block) * block * 255.0
    for by in range(rows):
        for bx in range(cols):
            y0, x0 = by * block, bx * block
            blk = cur[y0:y0 + block, x0:x0 + block].astype(np.int32)

            def cost(dy: int, dx: int) -> tuple[float, int] | None:
                y, x = y0 + dy, x0 + dx
                if abs(dy) > radius or abs(dx) > radius or y < 0 or x < 0 or y + block > h or x + block > w:
                    return None
                s = int(np.abs(blk - ref32[y:y + block, x:x + block]).sum())
                return s / scale + penalty * float(abs(dy) + abs(dx)) / float(radius), s

            best, best_sad = cost(0, 0)  # (0, 0) always lies inside the frame
            by_, bx_ = 0, 0
            if best_sad:
                for _ in range(radius):
                    cy, cx, moved = by_, bx_, False
                    for oy, ox in LARGE:
                        c = cost(cy + oy, cx + ox)
                        if c is not None and c[0] < best:
                            best, best_sad, by_, bx_, moved = c[0], c[1], cy + oy, cx + ox, True
                    if not moved:
                        break
                cy, cx = by_, bx_
                for oy, ox in SMALL:
                    c = cost(cy + oy, cx + ox)
                    if c is not None and c[0] < best:
                        best, best_sad, by_, bx_ = c[0], c[1], cy + oy, cx + ox
            sad[by, bx], dys[by, bx], dxs[by, bx] = best_sad, by_, bx_
    return sad, dys, dxs


def _cache_dir() -> Path:
    root = os.environ.get("VENUS_EDGE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "venus-edge"


def _compile(target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    # Write next to the target and rename, so two processes compiling at once never load half a file.
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        for flags in (["-O3", "-march=native"], ["-O3"]):
            done = subprocess.run([cc, *flags, "-shared", "-fPIC", "-o", tmp, str(SOURCE)],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                os.replace(tmp, target)
                return
        raise OSError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"{cc} failed")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_LIB: ctypes.CDLL | None = None
_TRIED = False


def _library() -> ctypes.CDLL | None:
    """The compiled kernel, built on first use; None (with one warning) where it cannot be built."""
    global _LIB, _TRIED
    if _TRIED:
        return _LIB
    _TRIED = True
    tag = hashlib.sha1(SOURCE.read_bytes() + platform.machine().encode() + sys.platform.encode()).hexdigest()[:12]
    target = _cache_dir() / "kernels" / f"block_match-{tag}.so"
    try:
        if not target.exists():
            _compile(target)
        lib = ctypes.CDLL(str(target))
    except (OSError, subprocess.SubprocessError) as e:
        warnings.warn(f"the C block matcher could not be built ({e}); using the NumPy one, which is about "
                      "100x slower. Install a C compiler (gcc) to get the fast one.", RuntimeWarning, stacklevel=3)
        return None
    u8, i32 = np.ctypeslib.ndpointer(np.uint8, flags="C"), np.ctypeslib.ndpointer(np.int32, flags="C")
    lib.block_match.argtypes = [u8, u8, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_double,
                                i32, i32, i32]
    lib.block_match.restype = None
    _LIB = lib
    return lib


def backend() -> str:
    """'c' when the compiled kernel runs, 'numpy' when the reference stands in for it."""
    return "c" if _library() is not None else "numpy"


def match(ref: np.ndarray, cur: np.ndarray, block: int = 16, radius: int = 41,
          penalty: float = 0.01) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sad, dy, dx) like `match_reference`, by the compiled kernel where there is one."""
    _check(ref, cur, block, radius)
    lib = _library()
    if lib is None:
        return match_reference(ref, cur, block, radius, penalty)
    h, w = ref.shape
    shape = (h // block, w // block)
    sad, dy, dx = np.empty(shape, np.int32), np.empty(shape, np.int32), np.empty(shape, np.int32)
    lib.block_match(np.ascontiguousarray(ref), np.ascontiguousarray(cur), h, w, block, radius, float(penalty),
                    sad, dy, dx)
    return sad, dy, dx
