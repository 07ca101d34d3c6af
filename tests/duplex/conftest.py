"""Fixtures for the duplex tests (helpers live in duplex_helpers.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from duplex_helpers import say  # noqa: E402


@pytest.fixture(scope="session")
def far_speech() -> np.ndarray:
    """Half a minute of the 'assistant' talking, as played by the loudspeaker."""
    text = ("The printing press changed Europe within a single lifetime. Books became cheap, and ideas moved "
            "faster than any ruler could follow. Scholars shared their findings, merchants printed price lists, "
            "and ordinary people began to read in their own languages rather than in Latin.")
    return 0.3 * say(text, "en-us", 170)
