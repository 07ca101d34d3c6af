"""The evidence ring: recent audio and frames, frozen per task at the delegate's opening time.

Bounded by retention (seconds kept) and by a frame cap; a frozen snapshot
takes the context window before the cutoff and evenly picks frames from it.
Later observations cannot change what a task was about.
"""
from __future__ import annotations

import collections
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edge.private_files import open_private

RATE = 16000


def evidence_name(work_id: str) -> str:
    """The evidence file's name for a work id: a hash, so an id from the wire can never name a path."""
    digest = hashlib.sha256(work_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{digest}.npz"


@dataclass
class Evidence:
    """What the task may look at: audio and frames strictly before `cutoff_ns`."""

    cutoff_ns: int
    audio: np.ndarray  # float32 16 kHz mono, ending at the cutoff (or at the last audio before it)
    audio_start_ns: int
    frames: list[tuple[int, np.ndarray]] = field(default_factory=list)  # (t_ns, HxWx3 uint8)
    sample_rate: int = RATE

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate

    def save(self, path: Path) -> None:
        pcm = (np.clip(self.audio, -1, 1) * 32767).astype(np.int16)  # half the size of float32
        arrays = {"audio": pcm, "meta": np.array([self.cutoff_ns, self.audio_start_ns, self.sample_rate],
                                                         np.int64)}
        for i, (t, img) in enumerate(self.frames):
            arrays[f"frame_{i}_{t}"] = img
        tmp = path.with_name(path.name + ".tmp.npz")
        try:
            with open_private(tmp, "wb") as f:
                np.savez(f, **arrays)
            tmp.replace(path)  # atomic: a crash leaves no half-written evidence
        except BaseException:
            tmp.unlink(missing_ok=True)  # a full disk leaves no half-written file behind either
            raise

    @classmethod
    def load(cls, path: Path) -> "Evidence":
        with np.load(path) as z:
            cutoff, start, rate = (int(v) for v in z["meta"])
            frames = sorted((int(k.split("_")[2]), z[k]) for k in z.files if k.startswith("frame_"))
            return cls(cutoff, z["audio"].astype(np.float32) / 32767, start, frames, rate)


class EvidenceRing:
    def __init__(self, retention_s: float = 60.0, context_s: float = 12.0, max_frames: int = 48,
                 select_frames: int = 12) -> None:
        self.retention_ns = int(retention_s * 1e9)
        self.context_ns = int(context_s * 1e9)
        self.select_frames = select_frames
        self.audio: collections.deque[tuple[int, np.ndarray]] = collections.deque()  # (t_start_ns, samples)
        self.frames: collections.deque[tuple[int, np.ndarray]] = collections.deque(maxlen=max_frames)

    def add_audio(self, t_start_ns: int, samples: np.ndarray) -> None:
        self.audio.append((t_start_ns, samples))
        horizon = t_start_ns - self.retention_ns
        while self.audio and self.audio[0][0] + len(self.audio[0][1]) * 1_000_000_000 // RATE < horizon:
            self.audio.popleft()

    def add_frame(self, t_ns: int, image: np.ndarray) -> None:
        self.frames.append((t_ns, image))
        while self.frames and self.frames[0][0] < t_ns - self.retention_ns:
            self.frames.popleft()

    def freeze(self, cutoff_ns: int) -> Evidence:
        lo = cutoff_ns - self.context_ns
        parts, start = [], None
        for t0, samples in self.audio:
            t1 = t0 + len(samples) * 1_000_000_000 // RATE
            if t1 <= lo or t0 >= cutoff_ns:
                continue
            a = max(0, (lo - t0) * RATE // 1_000_000_000)
            b = min(len(samples), max(0, (cutoff_ns - t0) * RATE // 1_000_000_000))
            if b > a:
                start = t0 + a * 1_000_000_000 // RATE if start is None else start
                parts.append(samples[a:b])
        audio = np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)
        frames = [(t, img) for t, img in self.frames if lo <= t < cutoff_ns]
        if len(frames) > self.select_frames:  # evenly spaced, always keeping the newest
            idx = np.linspace(0, len(frames) - 1, self.select_frames).round().astype(int)
            frames = [frames[i] for i in sorted(set(idx))]
        return Evidence(cutoff_ns, audio, start if start is not None else cutoff_ns, [(t, i.copy()) for t, i in frames])
