"""Fixtures for the Jetson deployment tests (no Jetson needed); bundles come from the real exporter."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from deploy_support import make_rootfs, real_bundle


@pytest.fixture
def rootfs(tmp_path: Path) -> Path:
    return make_rootfs(tmp_path / "rootfs")


@pytest.fixture(scope="session")
def exported(tmp_path_factory) -> Path:
    """A tiny Audio bundle from `venus-export tiny` + `venus-export build`, once per test session."""
    where = os.environ.get("VENUS_TEST_CACHE")
    base = Path(where) if where else tmp_path_factory.mktemp("deploy-bundles")
    return real_bundle(base, "audio")


@pytest.fixture
def bundle(tmp_path: Path, exported: Path) -> Path:
    """A copy the test may change."""
    return Path(shutil.copytree(exported, tmp_path / "bundle"))
