"""A tiny Omni bundle as the exporter writes it (`venus-export tiny` + `venus-export build`), once per test session."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "venus"))
from bundle_support import make_bundle  # noqa: E402


@pytest.fixture(scope="session")
def omni_bundle(tmp_path_factory) -> Path:
    """VENUS_TEST_CACHE keeps the bundle across runs while developing; by default one per test session."""
    where = os.environ.get("VENUS_TEST_CACHE")
    base = Path(where) if where else tmp_path_factory.mktemp("memory-bundles")
    base.mkdir(parents=True, exist_ok=True)
    return make_bundle(base, "omni")
