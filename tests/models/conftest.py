"""Fixtures for the embedded-default tests (helpers live in models_helpers.py)."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(scope="session")
def transcriber():
    from edge.detect.asr import Transcriber
    return Transcriber(threads=1)
