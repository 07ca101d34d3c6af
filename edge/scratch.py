"""Temporary folders that never outlive their owner for long: removed at the end, or at the next start.

A process killed with SIGKILL runs no clean-up, so each folder holds a lock
(flock on a file inside) for as long as its owner lives; the kernel drops it
when the owner dies, however it dies. Whoever creates the next folder of the
same kind first removes every one whose lock is free: what a killed run left.
"""
from __future__ import annotations

import fcntl
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)
LOCK = ".owner"
SETTLE_S = 5.0  # a folder younger than this may still be taking its lock: left alone


class ScratchDir:
    """A private (0700) temporary folder, locked while this object lives; `remove()` deletes it."""

    def __init__(self, prefix: str, root: str | Path | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
        os.chmod(self.path, 0o700)
        self._fd: int | None = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _abandoned(folder: Path, idle_s: float) -> bool:
    """Its owner is gone (the lock is free) and nothing has been written in it for `idle_s`."""
    try:
        st = folder.stat()
        if st.st_uid != os.getuid() or time.time() - st.st_mtime < idle_s:
            return False
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False  # not ours, gone meanwhile, or made by something without a lock: left alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # its owner still runs
    finally:
        os.close(fd)
    return True


def sweep(prefix: str, root: str | Path | None = None, idle_s: float = SETTLE_S) -> list[Path]:
    """Remove every `prefix*` folder under `root` (the temporary folder by default) whose owner has died."""
    base = Path(root or tempfile.gettempdir())
    removed = []
    try:
        candidates = [p for p in base.iterdir() if p.name.startswith(prefix) and p.is_dir() and not p.is_symlink()]
    except OSError:
        return removed
    for folder in candidates:
        if _abandoned(folder, idle_s):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    if removed:
        log.info("removed %d folder(s) left by runs that were killed: %s", len(removed),
                 ", ".join(p.name for p in removed))
    return removed
