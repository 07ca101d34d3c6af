"""The memory archive on disk: what is stored per kept frame, audio alignment, the budget and retention."""
from __future__ import annotations

import numpy as np
import pytest

from edge.memory.archive import Archive
from edge.memory.settings import MemorySettings

RATE = 16000


def frame(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (180, 320, 3), dtype=np.uint8)


def feed_audio(archive: Archive, start: float, end: float) -> None:
    """One ramp sample per 1/16000 s so a sample's value tells its time."""
    for t in np.arange(start, end, 0.5):
        n = np.arange(round(t * RATE), round((t + 0.5) * RATE))
        archive.add_audio(float(t), (n % 30000).astype(np.int16))


def test_a_kept_frame_is_stored_with_thumbnail_tokens_and_its_seconds_of_audio(tmp_path):
    archive = Archive(MemorySettings(tmp_path))
    feed_audio(archive, 0, 10)
    entry = archive.add(10.0, frame(1), "anchor", "text: KEYS", tokens=np.ones((64, 8), np.float32))
    feed_audio(archive, 10, 20)
    reopened = Archive(MemorySettings(tmp_path))   # everything survives a restart
    (e,) = reopened.entries()
    assert (e.t, e.kind, e.description) == (10.0, "anchor", "text: KEYS")
    assert reopened.thumbnail(e).shape == (180, 320, 3)
    assert reopened.tokens(e).shape == (64, 8)
    pcm = reopened.audio(e)
    assert len(pcm) == 4 * RATE                     # 2 s before and 2 s after the frame
    assert e.audio_t0 == 8.0 and pcm[0] == (8 * RATE) % 30000   # sample i lies at audio_t0 + i / rate


def test_no_second_of_audio_is_stored_twice(tmp_path):
    archive = Archive(MemorySettings(tmp_path))
    feed_audio(archive, 0, 5)
    a = archive.add(5.0, frame(1))
    feed_audio(archive, 5, 6)
    b = archive.add(6.0, frame(2))     # b's window [4, 8) overlaps a's [3, 7): a ends where b begins
    feed_audio(archive, 6, 12)
    ta = a.audio_t0 + np.arange(len(archive.audio(a))) / RATE
    tb = b.audio_t0 + np.arange(len(archive.audio(b))) / RATE
    assert ta.max() < tb.min() and tb.max() < 8.0
    assert len(ta) + len(tb) == 5 * RATE           # [3, 8) once


def test_the_budget_deletes_the_oldest_first(tmp_path):
    archive = Archive(MemorySettings(tmp_path, budget_mb=0.2, keep_s=0))
    for i in range(40):
        archive.add(float(i), frame(i), description=f"text: W{i}")
    kept = archive.entries()
    assert archive.bytes <= 0.2e6
    assert kept[-1].description == "text: W39" and kept[0].t > 0     # the newest stay, the oldest went
    on_disk = sum(p.stat().st_size for p in tmp_path.iterdir() if p.suffix in (".jpg", ".npy", ".pcm"))
    assert on_disk == archive.bytes and len(list(tmp_path.glob("*.jpg"))) == len(kept)
    assert [e.id for e in Archive(MemorySettings(tmp_path, budget_mb=0.2, keep_s=0)).entries()] == [e.id for e in kept]


def test_entries_older_than_keep_s_are_deleted(tmp_path):
    archive = Archive(MemorySettings(tmp_path, keep_s=60))
    for t in range(0, 200, 10):
        archive.add(float(t), frame(t))
    assert min(e.t for e in archive.entries()) >= 190 - 60


def test_a_late_description_is_kept_across_a_restart(tmp_path):
    archive = Archive(MemorySettings(tmp_path))
    e = archive.add(1.0, frame(0))
    archive.describe(e.id, "text: LATE")
    assert Archive(MemorySettings(tmp_path)).entries()[0].description == "text: LATE"


def test_bad_settings_and_frames_are_named(tmp_path):
    with pytest.raises(ValueError, match="budget"):
        Archive(MemorySettings(tmp_path, budget_mb=0))
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        Archive(MemorySettings(tmp_path)).add(0.0, np.zeros((10, 10), np.uint8))
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="cannot be created"):
        Archive(MemorySettings(tmp_path / "file" / "sub"))
