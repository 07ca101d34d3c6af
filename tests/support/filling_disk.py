"""Files and a database whose writes fail as on a full disk, for the tests of what a writer does when it fills."""
from __future__ import annotations

import errno
import os
import sqlite3

SQLITE_FULL = 13


class Disk:
    """A disk several files share: all of them are full at once."""

    full = False


class FillingDisk:
    """Wraps an open file: its writes raise ENOSPC while `full` is set, or while its `disk` is full."""

    def __init__(self, f, disk: Disk | None = None) -> None:
        self.f, self.full, self.disk = f, False, disk

    def write(self, data) -> int:
        if self.full or (self.disk is not None and self.disk.full):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.f.write(data)

    def __enter__(self) -> "FillingDisk":
        return self

    def __exit__(self, *exc) -> None:
        self.f.close()

    def __getattr__(self, name):
        return getattr(self.f, name)


class FillingDatabase:
    """Wraps an SQLite connection: while its disk is full, a statement that changes the file fails as SQLite
    fails on a full disk (SQLITE_FULL, "database or disk is full"); reading still works, as it does there."""

    WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "ALTER", "DROP")

    def __init__(self, db: sqlite3.Connection, disk: Disk) -> None:
        self.db, self.disk = db, disk

    def execute(self, sql: str, *args):
        if self.disk.full and sql.lstrip().upper().startswith(self.WRITES):
            err = sqlite3.OperationalError("database or disk is full")
            err.sqlite_errorcode, err.sqlite_errorname = SQLITE_FULL, "SQLITE_FULL"  # as SQLite sets them
            raise err
        return self.db.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self.db, name)
