"""What the device records (memory archive, sessions folder) is readable by its owner only."""
from __future__ import annotations

import os
import stat

import numpy as np

from edge.memory.archive import Archive
from edge.memory.settings import MemorySettings
from edge.private_files import private_dir


def mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_the_memory_archive_is_private(tmp_path):
    root = tmp_path / "memory"
    archive = Archive(MemorySettings(root))
    for t in range(0, 12):
        archive.add_audio(float(t), np.full(16000, 1000, np.int16))
    archive.add(10.0, np.random.default_rng(0).integers(0, 255, (48, 64, 3), np.uint8), "anchor", "text: KEYS",
                tokens=np.ones((4, 8), np.float32))
    archive.add_audio(12.0, np.full(16000, 1000, np.int16))
    files = list(root.iterdir())
    assert {f.suffix for f in files} >= {".jpg", ".npy", ".pcm", ".jsonl"}
    assert mode(root) == 0o700 and all(mode(f) == 0o600 for f in files), {f.name: oct(mode(f)) for f in files}


def test_a_users_existing_folder_keeps_its_mode_but_new_folders_are_private(tmp_path):
    mine = tmp_path / "home"
    mine.mkdir(mode=0o755)
    os.chmod(mine, 0o755)
    private_dir(mine / "a" / "b")
    assert mode(mine) == 0o755  # a journal given with --journal never narrows the user's own folder
    assert mode(mine / "a") == 0o700 and mode(mine / "a" / "b") == 0o700
    private_dir(mine, narrow=True)  # a folder the program owns (sessions/, the archive) is narrowed
    assert mode(mine) == 0o700
