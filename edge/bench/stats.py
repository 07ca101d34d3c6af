"""Percentiles for benchmark tables."""
from __future__ import annotations

import numpy as np


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")
