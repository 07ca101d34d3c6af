"""The sweep directory: its identity and the rows completed so far, written as they complete.

rows.jsonl gets one line per finished precision, flushed and synced before
the next one starts, so a killed sweep resumes from the next missing row.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path


class SweepError(ValueError):
    """The sweep cannot go on; str() says why and what to do, in one sentence."""


def row_key(type_name: str, imatrix: bool) -> str:
    return f"{type_name}+imatrix" if imatrix else type_name


class SweepState:
    def __init__(self, out: Path, identity: dict, fresh: bool = False) -> None:
        self.out = out
        self.identity = identity
        out.mkdir(parents=True, exist_ok=True)
        # one writer per directory; the lock goes away with the process, so a killed sweep never blocks a resume
        self._lock = open(out / ".lock", "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise SweepError(f"another venus-quant sweep is writing to {out}; "
                             "wait for it or choose another -o") from None
        self.rows_path = out / "rows.jsonl"
        self.id_path = out / "sweep.json"
        if fresh:  # everything measured or made for an earlier input goes; conversions keep their own stamps
            stale = [self.rows_path, self.id_path, out / "imatrix.npz", *out.glob("models/*"), *out.glob("reference/*")]
            for p in stale:
                p.unlink(missing_ok=True)
        if self.id_path.is_file():
            old = json.loads(self.id_path.read_text())
            diff = [k for k in identity if old.get(k) != identity[k]]
            if diff:
                self.close()
                raise SweepError(f"{out} holds a sweep with a different {diff[0]}; "
                                 "choose another -o directory or pass --fresh to start over")
        else:
            self.id_path.write_text(json.dumps(identity, indent=2))
        self.rows: dict[str, dict] = {}
        if self.rows_path.is_file():
            for line in self.rows_path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a kill: that precision is simply measured again
                self.rows[row_key(row["type"], row.get("imatrix", False))] = row

    def close(self) -> None:
        """Let another sweep write here (the lock is also released when the process ends)."""
        if not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def done(self, key: str) -> bool:
        """Measured (or skipped for good); a failed row is tried again by the next run."""
        return self.rows.get(key, {}).get("status") in ("ok", "skipped")

    def add(self, row: dict) -> None:
        key = row_key(row["type"], row.get("imatrix", False))
        self.rows[key] = row
        with open(self.rows_path, "a") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def forget(self, key: str) -> None:
        """Drop a row (to measure it again), rewriting the file."""
        self.rows.pop(key, None)
        tmp = self.rows_path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in self.rows.values()))
        tmp.replace(self.rows_path)
