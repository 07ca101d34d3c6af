"""An Omni bundle exactly as the exporter writes it (the Audio one is conftest's `exported_audio_bundle`).

Import the fixture into a test module: `from exported import exported_omni_bundle  # noqa: F401`.
"""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def exported_omni_bundle(tiny_bundles) -> Path:
    """`venus-export tiny --variant omni` + `venus-export build`: nothing added, nothing edited (the session's
    one Omni export, tests/conftest.py; a test that changes a bundle changes a copy)."""
    return tiny_bundles["omni"]
