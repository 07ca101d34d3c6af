"""Keeping the journal folder of an always-on device within its storage: by age, then by total size.

A journal holds the session's audio (about 115 MB an hour of microphone and
reply), so an SD card or eMMC fills within days unless old sessions go. At each
session start the folder is pruned: sessions older than `max_age_days` go, then
the oldest ones until the rest fit `max_total_mb`; the session about to start
is never touched. A session is its journal with everything named after it
(`<journal>.harness/`: the work-item store and frozen evidence). In the stores
that stay, finished work items beyond the newest `keep_finished` go too: the store's own pruning is handed
in by the caller (the command line gives the harness's), so the journal's folder knows nothing of the harness.
"""
from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)
JOURNAL_SUFFIX = ".journal"


@dataclass(frozen=True)
class Retention:
    """Defaults for a 32-64 GB SD card or eMMC shared with the OS and a 5-15 GB bundle."""

    max_age_days: float = 7.0
    max_total_mb: float = 1024.0  # all finished sessions together: about 9 hours of audio
    keep_finished: int = 500  # finished work items kept per store (the newest)

    def __post_init__(self) -> None:
        if self.max_age_days <= 0 or self.max_total_mb <= 0 or self.keep_finished < 0:
            raise ValueError("journal retention needs a positive age in days and size in MB, and a number of "
                             f"finished items of 0 or more; got {self.max_age_days}, {self.max_total_mb}, "
                             f"{self.keep_finished}")


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return path.stat().st_size if path.exists() else 0


def _session_files(journal: Path) -> list[Path]:
    """The journal and everything named after it."""
    return [journal, *sorted(journal.parent.glob(journal.name + ".*"))]


# A work-item store's pruning: (the store's file, how many finished items to keep) -> how many went.
PruneStore = Callable[[Path, int], int]


def prune_sessions(folder: Path, keep: Retention, active: Path | None = None,
                   now: float | None = None, prune_store: PruneStore | None = None) -> list[Path]:
    """Remove old sessions from `folder`; returns the journals removed (oldest first). With `prune_store`,
    each remaining session's work-item store keeps its newest `keep.keep_finished` finished items."""
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    active = active.resolve() if active is not None else None
    sessions = []
    for journal in folder.glob("*" + JOURNAL_SUFFIX):
        if not journal.is_file() or journal.resolve() == active:
            continue
        files = _session_files(journal)
        sessions.append((journal.stat().st_mtime, journal, files, sum(_size(f) for f in files)))
    sessions.sort(key=lambda s: s[0])
    total = sum(s[3] for s in sessions)
    removed = []
    for mtime, journal, files, size in sessions:
        if now - mtime <= keep.max_age_days * 86400 and total <= keep.max_total_mb * 1e6:
            break  # newest from here on, and the rest fits
        for f in files:
            shutil.rmtree(f, ignore_errors=True) if f.is_dir() else f.unlink(missing_ok=True)
        total -= size
        removed.append(journal)
    for journal in removed:
        log.info("retention: removed session %s", journal.name)
    if prune_store is not None:
        for store in folder.glob("*" + JOURNAL_SUFFIX + ".harness/work.sqlite"):
            prune_store(store, keep.keep_finished)
    return removed
