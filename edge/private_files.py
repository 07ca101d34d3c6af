"""Files that hold conversation data: readable by their owner only (0600 files in 0700 folders).

Journals, the work store, evidence, reply audio and the memory archive hold what was said
in a room; nobody else on the device should read them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: str | Path, narrow: bool = False) -> Path:
    """Create `path` and any missing parents as 0700 folders. An existing folder is left as it is (it may be
    the user's own, like the current folder) unless `narrow`: a folder only this program fills."""
    p = Path(path)
    missing = [d for d in (p, *p.parents) if not d.exists()]
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
            os.chmod(d, DIR_MODE)  # mkdir's mode is cut by the umask; the folder must still be 0700
        except FileExistsError:  # made meanwhile by another process
            pass
    if narrow and not missing:
        try:
            os.chmod(p, DIR_MODE)
        except OSError:  # a folder we do not own: leave it, the files in it stay 0600
            pass
    if not p.is_dir():
        raise NotADirectoryError(f"{p} is not a folder")
    return p


def private_file(path: str | Path) -> Path:
    """Make sure `path` exists as a 0600 file (created empty if missing), for libraries that open it themselves."""
    p = Path(path)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    os.chmod(p, FILE_MODE)
    return p


def open_private(path: str | Path, mode: str = "wb", **kwargs: Any) -> IO:
    """open() whose new file is created 0600 from the start (never briefly world-readable)."""
    p = Path(path)
    opener = lambda name, flags: os.open(name, flags, FILE_MODE)  # noqa: E731
    f = open(p, mode, opener=opener, **kwargs)
    os.chmod(p, FILE_MODE)  # an existing file keeps its old mode through open(); narrow it
    return f
