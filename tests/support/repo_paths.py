"""Where the tests find the repository and this folder of helpers, wherever a test file sits."""
from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parents[1]
