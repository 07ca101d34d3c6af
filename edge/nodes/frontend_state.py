"""What the frontend node keeps for its own restart: one file per step, in a folder private to the session.

The supervisor's Checkpoint carries small state on the control socket (one
message header, 64 KB at most), and a Venus model's context does not fit
there. So after every step the node writes everything a restarted frontend
needs (its own chunk position and reply map, the frontend's conversation
state, the reliable messages not yet acknowledged) to `step-<n>.msgpack`,
atomically, and the Checkpoint names the folder. A restart reads the newest
complete file: a step whose file was never written is simply stepped again.

The folder lives in $XDG_RUNTIME_DIR when there is one (a tmpfs, private to
the user: on the device, systemd's RuntimeDirectory), so per-step writes
never wear flash storage; it is removed when the session ends.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import msgpack

log = logging.getLogger(__name__)
KEPT = 2  # step files kept: the newest, and the one before it while the newest is being replaced
_STEP = re.compile(r"^step-(\d+)\.msgpack$")


def state_folder(restore: dict) -> Path:
    """The folder an earlier life of this node used (from its checkpoint), else a new private one."""
    if restore.get("dir") and Path(restore["dir"]).is_dir():
        return Path(restore["dir"])
    return Path(tempfile.mkdtemp(prefix="venus-frontend-", dir=os.environ.get("XDG_RUNTIME_DIR") or None))


class StepFiles:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _steps(self) -> list[tuple[int, Path]]:
        found = [(int(mt.group(1)), p) for p in self.folder.iterdir() if (mt := _STEP.match(p.name))]
        return sorted(found)

    def write(self, gen: int, state: dict[str, Any]) -> None:
        tmp = self.folder / f".step-{gen}.tmp"
        tmp.write_bytes(msgpack.packb(state, use_bin_type=True))
        os.replace(tmp, self.folder / f"step-{gen}.msgpack")  # whole or absent, never torn
        for _, old in self._steps()[:-KEPT]:
            old.unlink(missing_ok=True)

    def newest(self) -> tuple[int, dict[str, Any]] | None:
        """The newest step file that reads back whole, with its number; None when there is none."""
        for gen, path in reversed(self._steps()):
            try:
                return gen, msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=False)
            except (OSError, ValueError, msgpack.UnpackException) as exc:
                log.warning("frontend: %s cannot be read back (%s); trying the one before", path.name, exc)
        return None

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
