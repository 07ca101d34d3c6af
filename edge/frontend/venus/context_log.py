"""The Venus model's context as the KV cache holds it, position by position, kept so a restart can rebuild it.

Every position of llama.cpp's sequence holds a token id or an input
embedding row (the chunk's audio, a frame's slices). The log sits between
the chunk loop and the model and mirrors every change to the cache: prefills
and decoded tokens append, `truncate` (a yielded turn) and `remove` (the KV
window sliding) cut the same positions. Token ids are kept as numbers; rows
go to an append-only float16 file, written once per chunk at the checkpoint
(float16: half the space, and the model computes the cache in that precision
anyway). Rows no longer in the context are dropped by rewriting the file
once they number half the live ones, so it holds at most 1.5 windows (for a
7B model, 7 KB a row: about 85 MB at a full 8000-position window).

A restarted frontend clears the cache and prefills the same positions again
in order: the same context at the same positions (n_past equal), so the
model goes on with the conversation it had, the user's audio included. Its
keys and values are computed afresh, so they match the old ones up to
float16 rounding and, after a slide, up to what the dropped units had
contributed to them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edge.backends.llama import LlamaModel

MIN_COMPACT_ROWS = 2048  # rewrite the row file only when this many dead rows have piled up (and half the live)


class ContextLog:
    """Called by the chunk loop exactly as the model is; everything that is not a cache change passes through."""

    def __init__(self, llm: LlamaModel) -> None:
        self.llm = llm
        self.entries: list[int] = []  # per position: a token id (>= 0) or -1 - row
        self.folder: Path | None = None  # rows are kept only once a folder is given
        self.version = 0  # of the row file (a new one after each rewrite)
        self.n_rows = 0  # rows written or waiting to be
        self.unwritten: list[np.ndarray] = []  # rows of this chunk, written at the checkpoint
        self.retired: list[Path] = []  # row files replaced by a rewrite, removed at the next checkpoint
        self.kept_rows = True  # False once an embedding was prefilled with no folder to keep it in

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    # --- what changes the cache --------------------------------------------------------------------
    def prefill_tokens(self, tokens: list[int], want_logits: bool = True) -> np.ndarray | None:
        out = self.llm.prefill_tokens(tokens, want_logits)
        self.entries.extend(int(t) for t in tokens)
        return out

    def prefill_embeddings(self, embd: np.ndarray, want_logits: bool = False) -> np.ndarray | None:
        out = self.llm.prefill_embeddings(embd, want_logits)
        self._rows(np.asarray(embd))
        return out

    def step(self, token: int, hidden: bool = False, copy: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        out = self.llm.step(token, hidden, copy)
        self.entries.append(int(token))
        return out

    def logits_all(self, rows: list[int] | np.ndarray) -> np.ndarray:
        out = self.llm.logits_all(rows)
        if isinstance(rows, np.ndarray) and rows.ndim == 2:
            self._rows(rows)
        else:
            self.entries.extend(int(t) for t in rows)
        return out

    def truncate(self, pos: int) -> None:
        self.llm.truncate(pos)
        del self.entries[pos:]

    def remove(self, p0: int, p1: int) -> None:
        self.llm.remove(p0, p1)
        del self.entries[p0:p1]

    def clear(self) -> None:
        self.llm.clear()
        self.entries = []

    def _rows(self, embd: np.ndarray) -> None:
        if self.folder is None:
            self.kept_rows = False
        else:
            self.unwritten.append(np.asarray(embd, np.float16))
        first = self.n_rows
        self.n_rows += len(embd)
        self.entries.extend(-1 - r for r in range(first, self.n_rows))

    # --- the checkpoint ----------------------------------------------------------------------------
    def _path(self, version: int) -> Path:
        assert self.folder is not None
        return self.folder / f"context-rows-{version}.f16"

    def checkpoint(self) -> dict[str, Any]:
        """Write this chunk's rows; the positions and the row file that hold the context now."""
        if self.folder is None or not self.kept_rows:
            return {}
        for old in self.retired:  # the step file written since names the new row file
            old.unlink(missing_ok=True)
        self.retired = []
        if self.unwritten:
            with open(self._path(self.version), "ab") as f:
                for rows in self.unwritten:
                    f.write(rows.tobytes())
            self.unwritten = []
        live = sum(1 for e in self.entries if e < 0)
        if self.n_rows - live > max(live // 2, MIN_COMPACT_ROWS):
            self._rewrite()
        return {"entries": np.asarray(self.entries, np.int64).tobytes(), "rows": self.n_rows,
                "version": self.version, "n_embd": self.llm.n_embd}

    def _rewrite(self) -> None:
        """Keep only the live rows, in a new file; the old one goes once a checkpoint names the new one."""
        old = self._path(self.version)
        rows = self._read(old, self.n_rows)
        live = [-1 - e for e in self.entries if e < 0]
        self.version += 1
        self._path(self.version).write_bytes(np.ascontiguousarray(rows[live]).tobytes())
        renumber = iter(range(len(live)))
        self.entries = [e if e >= 0 else -1 - next(renumber) for e in self.entries]
        self.n_rows = len(live)
        self.retired.append(old)

    def _read(self, path: Path, n_rows: int) -> np.ndarray:
        d = self.llm.n_embd
        rows = np.fromfile(path, "<f2", count=n_rows * d) if n_rows else np.zeros(0, np.float16)
        if len(rows) != n_rows * d:
            raise ValueError(f"{path.name} holds {len(rows) // d} rows of the {n_rows} the checkpoint names")
        return rows.reshape(n_rows, d)

    # --- a restart ---------------------------------------------------------------------------------
    def keep(self, folder: Path, state: dict[str, Any]) -> int:
        """Keep rows in `folder` from now on; with an earlier checkpoint, rebuild the cache from it first.

        Returns how many positions were prefilled again."""
        self.folder = folder
        if not state:
            return 0
        if int(state["n_embd"]) != self.llm.n_embd:
            raise ValueError(f"the kept context has rows of width {state['n_embd']}, the model {self.llm.n_embd}")
        self.version, self.n_rows = int(state["version"]), int(state["rows"])
        path = self._path(self.version)
        path.touch()
        with open(path, "r+b") as f:  # rows of a chunk whose checkpoint never came are not part of it
            f.truncate(self.n_rows * self.llm.n_embd * 2)
        rows = self._read(path, self.n_rows)
        for stale in folder.glob("context-rows-*.f16"):
            if stale != path:
                stale.unlink(missing_ok=True)
        entries = np.frombuffer(state["entries"], np.int64)
        self.llm.clear()
        start = 0
        while start < len(entries):  # one batch per run of tokens or of rows
            is_row = entries[start] < 0
            end = start + 1
            while end < len(entries) and (entries[end] < 0) == is_row:
                end += 1
            run = entries[start:end]
            if is_row:
                self.llm.prefill_embeddings(rows[-1 - run].astype(np.float32), want_logits=False)
            else:
                self.llm.prefill_tokens([int(t) for t in run], want_logits=False)
            start = end
        self.entries = [int(e) for e in entries]
        return len(self.entries)
