"""An Omni bundle exactly as the exporter writes it (the Audio one is conftest's `exported_audio_bundle`).

Import the fixture into a test module: `from exported import exported_omni_bundle  # noqa: F401`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bundle_support import export_bundle


@pytest.fixture(scope="session")
def exported_omni_bundle(bundle_cache) -> Path:
    """`venus-export tiny --variant omni` + `venus-export build`: nothing added, nothing edited."""
    return export_bundle(bundle_cache, "omni", "exported-omni")[1]
