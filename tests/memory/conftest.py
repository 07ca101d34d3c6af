"""A tiny Omni bundle as the exporter writes it (`venus-export tiny` + `venus-export build`), once per test session."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def omni_bundle(tiny_bundles) -> Path:
    """The session's one Omni export (tests/conftest.py), shared with the other folders."""
    return tiny_bundles["omni"]
