"""The session journal: every bus message, in the order the recorder received it.

File layout: the magic line, then a stream of msgpack records. The first
record is a map describing the session (its config); every other record is
`[t_recv_ns, [topic, header, payload...]]`. Appending one record at a time
means a crash loses at most the record being written.
"""
from __future__ import annotations

import errno
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import msgpack

import edge.messages  # noqa: F401  (registers every message type)
from edge.private_files import open_private, private_dir
from edge.timeline.redact import redact
from edge.wire import Envelope, Message, WireError, decode

log = logging.getLogger(__name__)

MAGIC = b"VENUS-EDGE-JOURNAL 1\n"


class JournalError(ValueError):
    pass


class JournalWriter:
    """Appends records to a journal readable by its owner only, with the session's secrets redacted.

    Records gather in memory and reach the file on `flush` (the recorder flushes twice a second).
    A write that fails (a full disk) cuts the file back to its last whole record, drops what was
    pending, says so once, and the next flush tries again: the session goes on either way.
    """

    def __init__(self, path: str | Path, session: dict[str, Any], fsync_every: int = 0,
                 buffer_bytes: int = 1 << 13) -> None:
        self.path = Path(path)
        private_dir(self.path.parent)
        self._f: BinaryIO = open_private(self.path, "wb", buffering=0)
        self._packer = msgpack.Packer(use_bin_type=True)
        self._head = MAGIC + self._packer.pack(redact(session))
        self._buf = bytearray(self._head)
        self._pending = 0  # records in _buf
        self._good = 0  # file length after the last whole write
        self.records = 0
        self.dropped = 0
        self.error: str | None = None  # why writing is stopped right now, for health
        self.fsync_every = fsync_every
        self.buffer_bytes = buffer_bytes
        self.flush()

    def append(self, t_recv_ns: int, frames: list[bytes]) -> None:
        self._buf += self._packer.pack([t_recv_ns, frames])
        self._pending += 1
        self.records += 1
        if self.fsync_every and self.records % self.fsync_every == 0:
            self.flush(sync=True)
        elif len(self._buf) >= self.buffer_bytes:
            self.flush()

    def flush(self, sync: bool = False) -> bool:
        """Write what is pending; False (and nothing half-written) when the file system refuses."""
        if not self._buf and (self.error is not None or not sync):
            return self.error is None  # nothing new to try the disk with
        try:
            data, done = bytes(self._buf), 0
            while done < len(data):
                n = self._f.write(data[done:])
                if not n:
                    raise OSError(errno.ENOSPC, "nothing could be written")
                done += n
            if sync:
                os.fsync(self._f.fileno())
        except OSError as exc:
            self._fail(exc)
            return False
        self._good += len(self._buf)
        self._buf.clear()
        self._pending = 0
        if self.error is not None:
            log.warning("journal %s: writing again after %d records were lost", self.path, self.dropped)
            self.error = None
        return True

    def _fail(self, exc: OSError) -> None:
        try:  # back to the last whole record, so the journal stays readable
            self._f.truncate(self._good)
            self._f.seek(self._good)
        except OSError:
            pass
        self.dropped += self._pending
        self._pending = 0
        self._buf = bytearray(self._head if self._good == 0 else b"")  # a journal always starts with its header
        if self.error is None:
            why = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
            self.error = f"journal {self.path} stopped recording: {why}; it resumes once a write succeeds"
            log.error("%s", self.error)

    def close(self) -> None:
        if not self._f.closed:
            self.flush(sync=True)
            self._f.close()


@dataclass
class Record:
    t_recv_ns: int
    env: Envelope


class Journal:
    """A journal opened for reading. `session` is its first record."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise JournalError(f"journal {self.path} does not exist")
        with open(self.path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise JournalError(f"{self.path} is not a venus-edge journal (bad magic line)")
            unpacker = msgpack.Unpacker(f, raw=False, max_buffer_size=256 * 1024 * 1024)
            try:
                self.session: dict[str, Any] = next(unpacker)
            except StopIteration:
                raise JournalError(f"journal {self.path} has no session record") from None
        self.truncated = False

    def records(self) -> Iterator[Record]:
        with open(self.path, "rb") as f:
            f.seek(len(MAGIC))
            unpacker = msgpack.Unpacker(f, raw=False, max_buffer_size=256 * 1024 * 1024)
            next(unpacker)
            try:
                for item in unpacker:
                    try:
                        yield Record(item[0], decode(item[1]))
                    except (WireError, TypeError, IndexError):
                        continue  # a record this version cannot read; the rest still can
            except (msgpack.OutOfData, ValueError):
                self.truncated = True  # a crash cut the last record short

    def messages(self, *types: type[Message]) -> Iterator[tuple[Record, Message]]:
        seen: set[str] = set()
        for rec in self.records():
            msg = rec.env.msg
            if types and not isinstance(msg, types):
                continue
            if msg.RELIABLE:  # re-sent copies appear more than once on the bus
                key = f"{msg.TYPE}:{msg.id}"  # type: ignore[attr-defined]
                if key in seen:
                    continue
                seen.add(key)
            yield rec, msg


# What replay compares: what the assistant decided, said, played and delegated.
CONTENT_TYPES = ("chunk_decision", "speak_text", "playback_ack", "delegate_request")


def content(journal: Journal, types: tuple[str, ...] = CONTENT_TYPES) -> list[tuple[str, dict]]:
    """The session's content, in order, without timing or per-process ids."""
    out = []
    for _, msg in journal.messages():
        if msg.TYPE in types:
            out.append((msg.TYPE, msg.content()))
    return out
