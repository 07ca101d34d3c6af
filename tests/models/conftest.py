"""Fixtures for the embedded-default tests (helpers live in models_helpers.py)."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(scope="session")
def transcriber():
    from edge.detect.asr import Transcriber
    return Transcriber(threads=1)


@pytest.fixture(scope="module")
def frontend():
    """The embedded default's frontend on the virtual clock, one per test module (its chat state is the module's)."""
    from edge.frontend.default.build import build
    fe = build({"threads": 1, "realtime": False})
    yield fe
    fe.close()
