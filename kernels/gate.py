"""The frame gate of long-video memory: keep a sampled frame only when the last kept one cannot predict it.

Every sampled frame is reduced to grayscale at `size`², brought to the reference frame's
brightness and contrast (a lighting change is not new content), and predicted from the last
kept frame block by block (kernels/block_match). From the prediction:

- cost     = mean over blocks of (residual + motion cost); residual = mean absolute difference
             of the block's best prediction, in [0, 1]
- p99      = the 99th percentile of block residuals: a few blocks that changed a lot
- changed  = the fraction of blocks whose residual exceeds `changed_block`

the gate decides: an **anchor** (a new scene) on the first frame or when the cost reaches
`anchor_at`; **keep** when the cost reaches `drop_below`, when p99 exceeds `local_p99` or
`changed` exceeds `changed_fraction` (local-change protection), or after `max_drops` drops in a
row; otherwise **drop**. A kept frame becomes the reference for the next one, and the first one
kept `key_interval` frames after the last anchor is marked an anchor itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from kernels.block_match import match

Matcher = Callable[[np.ndarray, np.ndarray, int, int, float], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class GateSettings:
    size: int = 512               # frames are compared at size x size
    block: int = 16               # block side in pixels
    radius: float = 0.08          # search radius, a fraction of `size`
    penalty: float = 0.01         # motion cost of a full-radius displacement
    drop_below: float = 0.04      # cost under this (and no protection) drops the frame
    anchor_at: float = 0.10       # cost at or above this starts a new anchor
    local_p99: float = 0.30       # keep when the 99th percentile block residual exceeds this
    changed_block: float = 0.10   # a block with a residual above this counts as changed
    changed_fraction: float = 0.30
    max_drops: int = 4            # never drop more than this many frames in a row
    key_interval: int = 32        # frames after an anchor before a kept frame becomes the next one
    lighting: bool = True         # match brightness and contrast to the reference first

    def check(self) -> None:
        if self.size < self.block or self.size % self.block:
            raise ValueError(f"gate size {self.size} must be a multiple of the block size {self.block}")
        if not 0 < self.radius < 1:
            raise ValueError(f"gate radius {self.radius} is a fraction of the frame side, between 0 and 1")
        if not 0 <= self.drop_below <= self.anchor_at:
            raise ValueError(f"gate thresholds need 0 <= drop_below ({self.drop_below}) <= anchor_at "
                             f"({self.anchor_at})")
        if self.max_drops < 0 or self.key_interval < 1:
            raise ValueError("gate max_drops must be >= 0 and key_interval >= 1")

    @property
    def radius_px(self) -> int:
        return max(1, round(self.radius * self.size))


@dataclass(frozen=True)
class Decision:
    kind: str          # "anchor", "keep" or "drop"
    reason: str        # what decided it: first, cost, key-interval, local, changed, drops, static
    cost: float
    p99: float
    changed: float

    @property
    def kept(self) -> bool:
        return self.kind != "drop"


def to_gray(frame: np.ndarray, size: int) -> np.ndarray:
    """An HxW or HxWx3 uint8 frame as size x size grayscale uint8 (area averaging)."""
    if frame.ndim not in (2, 3) or (frame.ndim == 3 and frame.shape[2] not in (1, 3, 4)):
        raise ValueError(f"a frame is HxW or HxWxC with 1, 3 or 4 channels, got shape {frame.shape}")
    frame = np.asarray(frame, np.uint8)
    try:
        import cv2
    except ImportError:  # NumPy only: channel mean and nearest sampling
        gray = frame if frame.ndim == 2 else frame[..., :3].mean(axis=2)
        ys = (np.arange(size) * gray.shape[0] // size)
        xs = (np.arange(size) * gray.shape[1] // size)
        return np.ascontiguousarray(gray[ys][:, xs], dtype=np.uint8)
    if frame.ndim == 3 and frame.shape[2] == 1:
        frame = frame[..., 0]
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGRA2GRAY if frame.shape[2] == 4
                                                       else cv2.COLOR_BGR2GRAY)
    shrink = gray.shape[0] >= size and gray.shape[1] >= size
    return cv2.resize(gray, (size, size), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def mean_std(gray: np.ndarray) -> tuple[float, float]:
    try:
        import cv2
    except ImportError:
        return float(gray.mean()), float(gray.std())
    m, sd = cv2.meanStdDev(gray)
    return float(m[0, 0]), float(sd[0, 0])


def match_lighting(cur: np.ndarray, ref_mean: float, ref_std: float) -> np.ndarray:
    """`cur` with the reference's mean and contrast (gain kept within 1/3..3 so noise is not blown up)."""
    mean, std = mean_std(cur)
    gain = min(3.0, max(1 / 3, ref_std / std)) if std > 1.0 else 1.0
    table = np.clip((np.arange(256, dtype=np.float64) - mean) * gain + ref_mean + 0.5, 0, 255).astype(np.uint8)
    try:
        import cv2
    except ImportError:
        return table[cur]
    return cv2.LUT(cur, table)


class Gate:
    """Decides keep, anchor or drop for each sampled frame; holds the reference (last kept) frame."""

    def __init__(self, settings: GateSettings | None = None, matcher: Matcher = match) -> None:
        self.settings = settings or GateSettings()
        self.settings.check()
        self._match = matcher
        self._ref: np.ndarray | None = None
        self._ref_stats = (0.0, 0.0)
        self._drops = 0
        self._since_anchor = 0

    def reset(self) -> None:
        self._ref = None
        self._drops = 0
        self._since_anchor = 0

    def step(self, frame: np.ndarray) -> Decision:
        s = self.settings
        cur = to_gray(frame, s.size)
        if self._ref is None:
            return self._take(cur, Decision("anchor", "first", 1.0, 1.0, 1.0))
        probe = match_lighting(cur, *self._ref_stats) if s.lighting else cur
        sad, dy, dx = self._match(self._ref, probe, s.block, s.radius_px, s.penalty)
        residual = sad.astype(np.float64) / (s.block * s.block * 255.0)
        motion = s.penalty * (np.abs(dy) + np.abs(dx)) / s.radius_px
        cost = float((residual + motion).mean())
        p99 = float(np.percentile(residual, 99))
        changed = float((residual > s.changed_block).mean())
        self._since_anchor += 1
        if cost >= s.anchor_at:
            return self._take(cur, Decision("anchor", "cost", cost, p99, changed))
        for reason, hit in (("cost", cost >= s.drop_below), ("local", p99 > s.local_p99),
                            ("changed", changed > s.changed_fraction), ("drops", self._drops >= s.max_drops)):
            if hit:
                # A kept frame long after the last anchor becomes one: the refresh costs no extra frame.
                kind = "anchor" if self._since_anchor >= s.key_interval else "keep"
                return self._take(cur, Decision(kind, "key-interval" if kind == "anchor" else reason, cost, p99,
                                                changed))
        self._drops += 1
        return Decision("drop", "static", cost, p99, changed)

    def _take(self, gray: np.ndarray, decision: Decision) -> Decision:
        self._ref = gray
        self._ref_stats = mean_std(gray)
        self._drops = 0
        if decision.kind == "anchor":
            self._since_anchor = 0
        return decision
