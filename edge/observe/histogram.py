"""A cumulative histogram in the shape Prometheus reads (buckets, sum, count)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

LATENCY_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
RATIO = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0)


@dataclass
class Histogram:
    bounds: tuple[float, ...] = LATENCY_S
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.n += 1

    def cumulative(self) -> list[tuple[str, int]]:
        """(le, count of observations at most le), ending with +Inf."""
        out, running = [], 0
        for bound, c in zip([*map(repr, self.bounds), "+Inf"], self.counts):
            running += c
            out.append((bound, running))
        return out
