"""The session journal: every bus message, in the order the recorder received it.

File layout: the magic line, then a stream of msgpack records. The first
record is a map describing the session (its config); every other record is
`[t_recv_ns, [topic, header, payload...]]`. Appending one record at a time
means a crash loses at most the record being written.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import msgpack

import edge.messages  # noqa: F401  (registers every message type)
from edge.wire import Envelope, Message, WireError, decode

MAGIC = b"VENUS-EDGE-JOURNAL 1\n"


class JournalError(ValueError):
    pass


class JournalWriter:
    def __init__(self, path: str | Path, session: dict[str, Any], fsync_every: int = 0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: BinaryIO = open(self.path, "wb")
        self._f.write(MAGIC)
        self._packer = msgpack.Packer(use_bin_type=True)
        self._f.write(self._packer.pack(session))
        self.records = 0
        self.fsync_every = fsync_every

    def append(self, t_recv_ns: int, frames: list[bytes]) -> None:
        self._f.write(self._packer.pack([t_recv_ns, frames]))
        self.records += 1
        if self.fsync_every and self.records % self.fsync_every == 0:
            self.flush(sync=True)

    def flush(self, sync: bool = False) -> None:
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())

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
