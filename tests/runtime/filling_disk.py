"""A file whose writes fail as on a full disk, for the tests of what a writer does when the disk fills."""
from __future__ import annotations

import errno
import os


class FillingDisk:
    """Wraps an open file: its writes raise ENOSPC while `full` is set (a disk with no space left)."""

    def __init__(self, f) -> None:
        self.f, self.full = f, False

    def write(self, data) -> int:
        if self.full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.f.write(data)

    def __getattr__(self, name):
        return getattr(self.f, name)
