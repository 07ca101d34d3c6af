"""Settings of the memory archive; the defaults suit a laptop, a Jetson profile sets the budget."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MemorySettings:
    root: Path                      # the archive's folder (created on first use)
    budget_mb: float = 512.0        # disk budget; the oldest frames go first when it is exceeded
    keep_s: float = 40 * 60.0       # frames older than this are dropped too (0: only the budget limits); the
                                    # reference's memory_minutes=40
    thumb_side: int = 320           # the thumbnail's longer side in pixels
    jpeg_quality: int = 70
    audio_before_s: float = 2.0     # audio kept around a kept frame: [t - before, t + after], never twice
    audio_after_s: float = 2.0
    sample_rate: int = 16000

    def check(self) -> None:
        if self.budget_mb <= 0:
            raise ValueError(f"memory budget {self.budget_mb} MB must be positive (try 512)")
        if self.keep_s < 0:
            raise ValueError(f"memory keep_s {self.keep_s} must be 0 (no age limit) or positive")
        if not 32 <= self.thumb_side <= 4096 or not 1 <= self.jpeg_quality <= 100:
            raise ValueError("memory thumb_side must lie in 32..4096 and jpeg_quality in 1..100")
        if self.audio_before_s < 0 or self.audio_after_s < 0 or self.sample_rate <= 0:
            raise ValueError("memory audio windows must be >= 0 s and the sample rate positive")
