"""Shared paths and helpers for the Jetson deployment tests (no Jetson needed)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
JETSON = REPO / "deploy" / "jetson"


def run(cmd: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=120, **kw)


def make_rootfs(root: Path) -> Path:
    """A minimal stand-in for Linux_for_Tegra/rootfs: os-release and systemd's own units."""
    (root / "etc" / "systemd" / "system").mkdir(parents=True)
    (root / "etc" / "os-release").write_text('NAME="Ubuntu"\nVERSION_ID="22.04"\n')
    system_units = Path("/usr/lib/systemd/system")
    if system_units.is_dir():  # systemd-analyze --root needs sysinit.target and friends
        shutil.copytree(system_units, root / "usr" / "lib" / "systemd" / "system", symlinks=True)
    return root


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    return make_rootfs(tmp_path / "rootfs")


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    b = tmp_path / "bundle"
    (b / "audio").mkdir(parents=True)
    (b / "audio" / "encoder.onnx").write_bytes(b"onnx-audio")
    (b / "vision.onnx").write_bytes(b"onnx-vision")
    (b / "llm.Q4_K_M.gguf").write_bytes(b"GGUF")
    return b
