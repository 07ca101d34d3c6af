"""Fixtures for the Jetson deployment tests (no Jetson needed)."""
from __future__ import annotations

from pathlib import Path

import pytest

from deploy_support import make_rootfs


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
