"""The archive on disk: one entry per kept frame, with its thumbnail, descriptors and seconds of audio.

Layout of `settings.root`:
  index.jsonl        one JSON line per entry; later lines may update an entry's description
  NNNNNNNN.jpg       the thumbnail
  NNNNNNNN.npy       the vision tokens (an Omni bundle's descriptor), when given
  NNNNNNNN.pcm       16-bit mono audio from `audio_t0`, the seconds around the frame

Audio is attached as it arrives: a kept frame owns [t - audio_before_s, t + audio_after_s],
clipped so that no second is stored twice. When the folder outgrows the budget, or an entry
outlives `keep_s`, the oldest entries are deleted first.
"""
from __future__ import annotations

import json
import logging
import os
from collections import deque
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from edge.memory.settings import MemorySettings
from edge.private_files import open_private, private_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    id: int
    t: float                 # the frame's time on the session clock, seconds
    kind: str                # "anchor" (a new scene) or "keep"
    description: str = ""    # the scene description (the embedded default's descriptor)
    tokens: bool = False     # whether NNNNNNNN.npy holds vision tokens
    audio_t0: float = 0.0    # the time of the first stored audio sample

    @property
    def stem(self) -> str:
        return f"{self.id:08d}"


class Archive:
    def __init__(self, settings: MemorySettings) -> None:
        settings.check()
        self.settings = settings
        self.root = Path(settings.root)
        try:
            private_dir(self.root, narrow=True)  # what the camera saw and the room said: its owner's only
        except OSError as e:
            raise ValueError(f"the memory folder {self.root} cannot be created ({e.strerror}); "
                             "choose a writable folder") from None
        self._entries: dict[int, Entry] = self._load()
        self._bytes = sum(self._size(e) for e in self._entries.values())
        self._next = max(self._entries, default=-1) + 1
        self._audio: deque[tuple[float, np.ndarray]] = deque()  # recent audio, for the seconds before a frame
        self._audio_end = 0.0           # the end time of the latest audio received
        self._stored_until = -1e18      # audio before this time is already in some entry
        self._current: tuple[int, float] | None = None  # (entry id, window end) taking incoming audio

    # ---- reading -------------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """All entries, oldest first."""
        return sorted(self._entries.values(), key=lambda e: (e.t, e.id))

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes

    def thumbnail(self, entry: Entry) -> np.ndarray:
        import cv2
        img = cv2.imread(str(self.root / f"{entry.stem}.jpg"), cv2.IMREAD_COLOR)
        if img is None:
            raise ValueError(f"the thumbnail of memory entry {entry.id} is missing or unreadable in {self.root}")
        return img

    def tokens(self, entry: Entry) -> np.ndarray | None:
        return np.load(self.root / f"{entry.stem}.npy") if entry.tokens else None

    def audio(self, entry: Entry) -> np.ndarray:
        """The entry's audio as int16 samples from `entry.audio_t0` (empty when none arrived)."""
        path = self.root / f"{entry.stem}.pcm"
        return np.fromfile(path, dtype="<i2") if path.exists() else np.zeros(0, np.int16)

    # ---- writing -------------------------------------------------------------------------------
    def add(self, t: float, frame: np.ndarray, kind: str = "keep", description: str = "",
            tokens: np.ndarray | None = None) -> Entry:
        """Store a kept frame (HxWx3 BGR uint8) with its descriptors; returns its entry."""
        import cv2
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"a memory frame is HxWx3 uint8 (BGR), got {frame.shape} {frame.dtype}")
        s = self.settings
        scale = s.thumb_side / max(frame.shape[:2])
        thumb = frame if scale >= 1 else cv2.resize(frame, (round(frame.shape[1] * scale),
                                                            round(frame.shape[0] * scale)),
                                                    interpolation=cv2.INTER_AREA)
        ok, jpg = cv2.imencode(".jpg", thumb, [cv2.IMWRITE_JPEG_QUALITY, s.jpeg_quality])
        if not ok:
            raise ValueError("the frame could not be encoded as JPEG; check that it is a valid image")
        start = max(t - s.audio_before_s, self._stored_until)
        entry = Entry(self._next, float(t), kind, description, tokens is not None, float(start))
        self._next += 1
        with open_private(self.root / f"{entry.stem}.jpg", "wb") as f:
            f.write(jpg.tobytes())
        self._bytes += len(jpg)
        if tokens is not None:
            path = self.root / f"{entry.stem}.npy"
            with open_private(path, "wb") as f:
                np.save(f, np.asarray(tokens, np.float16))
            self._bytes += path.stat().st_size
        self._entries[entry.id] = entry
        self._append(asdict(entry))
        # The seconds before the frame that are already here, then the rest as it arrives.
        for t0, pcm in self._audio:
            self._write_audio(entry, start, t + s.audio_after_s, t0, pcm)
        self._current = (entry.id, t + s.audio_after_s)
        self._stored_until = max(self._stored_until, min(self._audio_end, t + s.audio_after_s))
        self._enforce(now=t)
        return entry

    def describe(self, entry_id: int, description: str) -> None:
        """Set an entry's description later (a describer that runs behind the gate)."""
        if entry_id in self._entries:
            self._entries[entry_id] = replace(self._entries[entry_id], description=description)
            self._append({"id": entry_id, "description": description})

    def add_audio(self, t0: float, pcm: np.ndarray) -> None:
        """Audio that starts at `t0` (int16, or float in [-1, 1]), in time order.

        It goes to the newest kept frame while that frame's window lasts; a newer frame ends an
        older one's window, so every second is stored at most once.
        """
        s = self.settings
        pcm = np.asarray(pcm)
        if pcm.dtype != np.int16:
            pcm = (np.clip(pcm.astype(np.float32), -1, 1) * 32767).astype(np.int16)
        end = t0 + len(pcm) / s.sample_rate
        self._audio.append((t0, pcm))
        while self._audio and self._audio[0][0] + len(self._audio[0][1]) / s.sample_rate < end - s.audio_before_s:
            self._audio.popleft()
        self._audio_end = max(self._audio_end, end)
        if self._current is not None:
            entry_id, until = self._current
            entry = self._entries.get(entry_id)
            if entry is not None:
                self._write_audio(entry, entry.audio_t0, until, t0, pcm)
                self._stored_until = max(self._stored_until, min(end, until))
            if entry is None or end >= until:
                self._current = None
        self._enforce(now=end)

    def _stored_before(self, entry: Entry) -> float:
        path = self.root / f"{entry.stem}.pcm"
        have = path.stat().st_size // 2 if path.exists() else 0
        return entry.audio_t0 + have / self.settings.sample_rate

    def _write_audio(self, entry: Entry, start: float, until: float, t0: float, pcm: np.ndarray) -> None:
        """Append the part of `pcm` (from t0) that lies in [start, until) after what the entry holds.

        A gap before `pcm` (no audio arrived) is filled with silence, so sample i of the file is
        always at audio_t0 + i / rate.
        """
        rate = self.settings.sample_rate
        held = self._stored_before(entry)
        start = max(start, held)
        a = max(0, round((start - t0) * rate))
        b = min(len(pcm), round((until - t0) * rate))
        if b <= a:
            return
        gap = max(0, round((t0 + a / rate - held) * rate))
        with open_private(self.root / f"{entry.stem}.pcm", "ab") as f:
            f.write(np.zeros(gap, "<i2").tobytes() + pcm[a:b].astype("<i2").tobytes())
        self._bytes += 2 * (gap + b - a)

    # ---- retention -----------------------------------------------------------------------------
    def _enforce(self, now: float) -> None:
        s = self.settings
        budget = s.budget_mb * 1e6
        order = self.entries()
        gone = []
        while order and (self._bytes > budget or (s.keep_s and now - order[0].t > s.keep_s)):
            if len(order) == 1 and self._bytes <= budget:
                break
            victim = order.pop(0)
            self._bytes -= self._size(victim)
            for ext in ("jpg", "npy", "pcm"):
                (self.root / f"{victim.stem}.{ext}").unlink(missing_ok=True)
            del self._entries[victim.id]
            gone.append(victim.id)
        if gone:
            self._rewrite()

    def _size(self, entry: Entry) -> int:
        return sum((self.root / f"{entry.stem}.{ext}").stat().st_size
                   for ext in ("jpg", "npy", "pcm") if (self.root / f"{entry.stem}.{ext}").exists())

    # ---- the index -----------------------------------------------------------------------------
    def _append(self, record: dict) -> None:
        with open_private(self.root / "index.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")

    def _rewrite(self) -> None:
        tmp = self.root / "index.jsonl.tmp"
        with open_private(tmp, "w") as f:
            f.write("".join(json.dumps(asdict(e)) + "\n" for e in self.entries()))
        os.replace(tmp, self.root / "index.jsonl")

    def _load(self) -> dict[int, Entry]:
        path = self.root / "index.jsonl"
        entries: dict[int, Entry] = {}
        if not path.exists():
            return entries
        for n, line in enumerate(path.read_text().splitlines(), 1):
            try:
                record = json.loads(line)
                if set(record) == {"id", "description"}:
                    if record["id"] in entries:
                        entries[record["id"]] = replace(entries[record["id"]], description=record["description"])
                else:
                    entries[record["id"]] = Entry(**record)
            except (ValueError, TypeError, KeyError):
                log.warning("memory index %s line %d is unreadable and was skipped", path, n)
        return {i: e for i, e in entries.items() if (self.root / f"{e.stem}.jpg").exists()}
