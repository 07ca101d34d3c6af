"""The audio format the models take: 16 kHz mono float32 in [-1, 1].

Every source is resampled to this rate at capture, and every detector, judge and
score reads samples at it. `kernels/logmel.py` keeps its own copy (kernels import
nothing of the project); tests/kernels checks the two agree.
"""
from __future__ import annotations

RATE = 16000
"""Samples per second of every audio array inside the runtime."""
