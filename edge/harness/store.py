"""Work items in SQLite (WAL): written before a delegate is acknowledged, so nothing accepted is lost.

Every transition is one transaction that updates the item and appends to
`events`; a crash leaves either the old state or the new one, never half.
A write the folder refuses (a full disk, a read-only folder) changes nothing
and raises `StoreUnwritable`, with one sentence saying why: the harness goes
on without delegation and the store is used again once a write succeeds.
"""
from __future__ import annotations

import contextlib
import errno
import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Iterator

from edge.harness.states import CANCELLED, DELIVERED, FAILED, QUEUED, TERMINAL, check
from edge.private_files import private_dir, private_file

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY,
    instruction TEXT NOT NULL,
    opened_ns INTEGER NOT NULL,
    chunk_index INTEGER NOT NULL,
    created_ns INTEGER NOT NULL,
    expires_ns INTEGER NOT NULL,
    state TEXT NOT NULL,
    capability TEXT NOT NULL DEFAULT '',
    arguments TEXT NOT NULL DEFAULT '',
    continuation_of TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before_ns INTEGER NOT NULL DEFAULT 0,
    started_ns INTEGER NOT NULL DEFAULT 0,
    ready_ns INTEGER NOT NULL DEFAULT 0,
    result TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    notice TEXT NOT NULL DEFAULT '',
    notice_state TEXT NOT NULL DEFAULT '',
    releases INTEGER NOT NULL DEFAULT 0,
    evidence TEXT NOT NULL DEFAULT '',
    updated_ns INTEGER NOT NULL DEFAULT 0,
    later TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS items_state ON items(state, notice_state);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    work_id TEXT NOT NULL,
    state TEXT NOT NULL,
    detail TEXT NOT NULL,
    t_ns INTEGER NOT NULL
);
"""


@dataclass
class WorkItem:
    id: str
    instruction: str
    opened_ns: int
    chunk_index: int
    created_ns: int
    expires_ns: int
    state: str = QUEUED
    capability: str = ""
    arguments: str = ""  # JSON text, once routed
    continuation_of: str = ""
    attempts: int = 0
    not_before_ns: int = 0
    started_ns: int = 0
    ready_ns: int = 0
    result: str = ""  # polished, speakable
    reason: str = ""  # why it failed or was cancelled
    notice: str = ""  # a failure told in speakable words
    notice_state: str = ""  # '' | pending | released | delivered
    releases: int = 0  # times its result was handed to the frontend (a new id after an interrupt cut)
    evidence: str = ""  # path of the frozen evidence
    updated_ns: int = 0
    later: str = ""  # words the harness says by itself when this item is due (not_before_ns): a timer's ring

    @property
    def args(self) -> dict[str, Any]:
        return json.loads(self.arguments) if self.arguments else {}

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL


_COLS = [f.name for f in fields(WorkItem)]


@dataclass
class Transition:
    work_id: str
    old: str
    new: str
    detail: str
    t_ns: int
    item: WorkItem = field(repr=False, default=None)  # type: ignore[assignment]


class StoreError(RuntimeError):
    pass


class StoreUnwritable(StoreError):
    """The harness folder cannot be written (a full disk, a read-only folder); the message is one sentence."""

    def __init__(self, sentence: str, full: bool) -> None:
        super().__init__(sentence)
        self.full = full  # no space left (rather than a folder that refuses writes)


# SQLite's primary result codes for a write the disk or the folder refused (not a damaged file)
_SQLITE_UNWRITABLE = {3: "permission denied", 8: "the folder is read-only", 10: "a disk input/output error",
                      13: "the disk is full", 14: "the file cannot be opened"}


def cannot_write(exc: BaseException) -> str | None:
    """Why a write to the harness folder failed, in a few words, if `exc` says it could not be written."""
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return "the disk is full"
        return exc.strerror.lower() if exc.strerror else str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.DatabaseError):
        return _SQLITE_UNWRITABLE.get((getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF)
    return None


def unwritable(folder: Path, exc: BaseException) -> StoreUnwritable:
    why = cannot_write(exc) or str(exc)
    return StoreUnwritable(f"the harness folder {folder} cannot be written ({why})", why == "the disk is full")


class WorkStore:
    """The store at `path` (0600 in a 0700 folder). One found damaged at start is kept beside it under a
    timestamped name and a fresh one is used (`moved_aside` says where it went): the device keeps working."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.moved_aside: Path | None = None
        self.refusals = 0  # writes the folder refused so far (the harness node watches this) ...
        self.last_refusal: StoreUnwritable | None = None  # ... and the newest one
        try:
            private_dir(self.path.parent)
        except OSError as exc:
            raise unwritable(self.path.parent, exc) from None
        try:
            self.db = self._open()
        except sqlite3.DatabaseError as exc:
            self.moved_aside = self._move_aside(exc)
            try:
                self.db = self._open()
            except sqlite3.DatabaseError as again:
                raise StoreError(f"cannot open the work-item store {self.path} ({again}); remove it or pick "
                                 "another harness directory") from None
        self.lock = threading.RLock()

    def _open(self) -> sqlite3.Connection:
        db = None
        try:
            private_file(self.path)  # SQLite gives its -wal and -shm files the database's own mode
            db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=10)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across a process kill
            db.executescript(SCHEMA)
            if "later" not in {row[1] for row in db.execute("PRAGMA table_info(items)")}:
                db.execute("ALTER TABLE items ADD COLUMN later TEXT NOT NULL DEFAULT ''")  # a store made before
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"damaged: {verdict}")
            return db
        except (sqlite3.DatabaseError, OSError) as exc:
            if db is not None:
                db.close()
            if isinstance(exc, OSError) or cannot_write(exc):  # a full disk is no damage: nothing is moved aside
                raise unwritable(self.path.parent, exc) from None
            raise

    def _move_aside(self, exc: Exception) -> Path:
        """Keep the damaged store (and its WAL) under a timestamped name; say so once."""
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while aside.exists():
            aside = aside.with_name(f"{aside.name.split('~')[0]}~{n}")
            n += 1
        try:
            for suffix in ("", "-wal", "-shm"):
                src = self.path.with_name(self.path.name + suffix)
                if src.exists():
                    src.rename(aside.with_name(aside.name + suffix))
        except OSError as err:
            raise StoreError(f"the work-item store {self.path} is damaged ({exc}) and cannot be moved aside "
                             f"({err.strerror}); remove it or pick another harness directory") from None
        log.warning("the work-item store %s was damaged (%s); it is kept as %s and a new, empty store is used",
                    self.path, exc, aside.name)
        return aside

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One write transaction: all of it, or (rolled back) none of it and StoreUnwritable when the folder
        refused it."""
        with self.lock:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    yield
                    self.db.execute("COMMIT")
                except BaseException:
                    if self.db.in_transaction:  # SQLite may have rolled a full disk's transaction back itself
                        self.db.execute("ROLLBACK")
                    raise
            except sqlite3.DatabaseError as exc:
                if cannot_write(exc) is None:
                    raise
                raise self.refused(exc) from None

    def refused(self, exc: BaseException) -> StoreUnwritable:
        """A write to the harness folder failed (the store's, or the evidence beside it): counted, and said."""
        self.refusals += 1
        self.last_refusal = unwritable(self.path.parent, exc)
        return self.last_refusal

    def add(self, item: WorkItem, t_ns: int) -> bool:
        """Insert a new item (state queued); False when this id was already accepted."""
        with self._writing():
            cur = self.db.execute(
                f"INSERT OR IGNORE INTO items ({', '.join(_COLS)}) VALUES ({', '.join('?' * len(_COLS))})",
                [getattr(item, c) for c in _COLS])
            if cur.rowcount:
                self.db.execute("INSERT INTO events (work_id, state, detail, t_ns) VALUES (?, ?, ?, ?)",
                                (item.id, QUEUED, "accepted", t_ns))
        return bool(cur.rowcount)

    def get(self, work_id: str) -> WorkItem | None:
        with self.lock:
            row = self.db.execute(f"SELECT {', '.join(_COLS)} FROM items WHERE id = ?", (work_id,)).fetchone()
        return WorkItem(*row) if row else None

    def in_states(self, states: Iterable[str]) -> list[WorkItem]:
        states = list(states)
        with self.lock:
            rows = self.db.execute(
                f"SELECT {', '.join(_COLS)} FROM items WHERE state IN ({', '.join('?' * len(states))}) "
                "ORDER BY created_ns, rowid", states).fetchall()
        return [WorkItem(*r) for r in rows]

    def pending_notices(self) -> list[WorkItem]:
        """Failed items whose speakable notice has not been released yet."""
        with self.lock:
            rows = self.db.execute(f"SELECT {', '.join(_COLS)} FROM items WHERE state = ? AND "
                                   "notice_state = 'pending' ORDER BY created_ns, rowid", (FAILED,)).fetchall()
        return [WorkItem(*r) for r in rows]

    def all(self) -> list[WorkItem]:
        with self.lock:
            rows = self.db.execute(f"SELECT {', '.join(_COLS)} FROM items ORDER BY created_ns, rowid").fetchall()
        return [WorkItem(*r) for r in rows]

    def transition(self, work_id: str, new: str, t_ns: int, detail: str = "", *, expect: str | None = None,
                   **updates: Any) -> Transition:
        """Move an item to `new` (checked against the allowed transitions) and update columns, atomically."""
        with self._writing():
            row = self.db.execute("SELECT state FROM items WHERE id = ?", (work_id,)).fetchone()
            if row is None:
                raise StoreError(f"no work item {work_id}")
            old = row[0]
            if expect is not None and old != expect:
                raise StoreError(f"work item {work_id} is {old}, not {expect}")
            check(old, new)
            bad = set(updates) - set(_COLS)
            if bad:
                raise StoreError(f"unknown work-item field(s) {', '.join(sorted(bad))}")
            cols = {**updates, "state": new, "updated_ns": t_ns}
            self.db.execute(f"UPDATE items SET {', '.join(f'{k} = ?' for k in cols)} WHERE id = ?",
                            [*cols.values(), work_id])
            self.db.execute("INSERT INTO events (work_id, state, detail, t_ns) VALUES (?, ?, ?, ?)",
                            (work_id, new, detail, t_ns))
        item = self.get(work_id)
        return Transition(work_id, old, new, detail, t_ns, item)  # type: ignore[arg-type]

    def update(self, work_id: str, **updates: Any) -> None:
        """Change columns without a state change (e.g. the notice was delivered)."""
        bad = set(updates) - set(_COLS)
        if bad or "state" in updates:
            raise StoreError(f"cannot update field(s) {', '.join(sorted(bad or {'state'}))} directly")
        with self._writing():
            self.db.execute(f"UPDATE items SET {', '.join(f'{k} = ?' for k in updates)} WHERE id = ?",
                            [*updates.values(), work_id])

    def events(self, work_id: str | None = None) -> list[tuple[str, str, str, int]]:
        with self.lock:
            if work_id is None:
                rows = self.db.execute("SELECT work_id, state, detail, t_ns FROM events ORDER BY seq").fetchall()
            else:
                rows = self.db.execute("SELECT work_id, state, detail, t_ns FROM events WHERE work_id = ? "
                                       "ORDER BY seq", (work_id,)).fetchall()
        return [tuple(r) for r in rows]  # type: ignore[misc]

    def close(self) -> None:
        with self.lock:
            self.db.close()


def prune_finished(path: str | Path, keep: int) -> int:
    """Delete finished work items (and their events) beyond the newest `keep`; returns how many went.

    Finished: delivered, cancelled, or failed with its notice no longer pending. Items
    still owed to the user are never pruned. Safe beside a running harness (WAL, one
    IMMEDIATE transaction); freed pages are reused by SQLite, so the file stops growing.
    """
    path = Path(path)
    if not path.is_file():
        return 0
    try:
        db = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    except sqlite3.DatabaseError:
        return 0
    done = (f"state IN ('{DELIVERED}', '{CANCELLED}') OR "
            f"(state = '{FAILED}' AND notice_state NOT IN ('pending', 'released'))")
    try:
        db.execute("BEGIN IMMEDIATE")
        ids = [r[0] for r in db.execute(f"SELECT id FROM items WHERE {done} ORDER BY rowid DESC "
                                        "LIMIT -1 OFFSET ?", (max(0, keep),))]
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ", ".join("?" * len(part))
            db.execute(f"DELETE FROM events WHERE work_id IN ({marks})", part)
            db.execute(f"DELETE FROM items WHERE id IN ({marks})", part)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(ids)
    except sqlite3.DatabaseError:
        if db.in_transaction:
            db.execute("ROLLBACK")
        return 0
    finally:
        db.close()
