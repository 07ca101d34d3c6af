"""Fixtures for the Jetson deployment tests (no Jetson needed); bundles come from the real exporter."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deploy_support import make_rootfs


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    return make_rootfs(tmp_path / "rootfs")


@pytest.fixture(scope="session")
def exported(tiny_bundles) -> Path:
    """A tiny Audio bundle from `venus-export tiny` + `venus-export build` (the session's one, tests/conftest.py)."""
    return tiny_bundles["audio"]


@pytest.fixture(scope="session")
def exported_omni(tiny_bundles) -> Path:
    """A tiny Omni bundle, the same way."""
    return tiny_bundles["omni"]


@pytest.fixture
def bundle(tmp_path: Path, exported: Path) -> Path:
    """A copy the test may change."""
    return Path(shutil.copytree(exported, tmp_path / "bundle"))
