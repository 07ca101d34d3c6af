"""Fixtures shared by the test folders that run whole sessions."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from slow_rule import mark_slow


@pytest.fixture(scope="session")
def speech_wav(tmp_path_factory) -> Path:
    """A 6 s, 16 kHz input: a spoken sentence then silence, made with espeak-ng and sox."""
    if not shutil.which("espeak-ng") or not shutil.which("sox"):
        pytest.skip("espeak-ng and sox are needed (apt-get install espeak-ng sox)")
    d = tmp_path_factory.mktemp("audio")
    raw = d / "raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(raw), "Hello, can you hear me?"], check=True)
    out = d / "input.wav"
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(out), "pad", "0.3", "6",
                    "trim", "0", "6"], check=True)
    return out


@pytest.fixture(scope="session")
def tiny_bundle_cache(tmp_path_factory) -> Path:
    """Where the tiny bundles are exported: VENUS_TEST_CACHE keeps them across runs while developing, by default
    one folder per test session."""
    where = os.environ.get("VENUS_TEST_CACHE")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        return Path(where)
    return tmp_path_factory.mktemp("venus-bundles")


@pytest.fixture(scope="session")
def tiny_bundles(tiny_bundle_cache) -> dict[str, Path]:
    """Tiny Omni and Audio bundles exactly as `venus-export tiny` + `venus-export build` write them, exported
    once per test session (each export its own process, side by side) for every folder that runs one. Tests
    that change a bundle change a copy."""
    from concurrent.futures import ThreadPoolExecutor

    from bundle_support import make_bundle  # tests/support/, on the path for every folder (pyproject.toml)

    with ThreadPoolExecutor(2) as pool:
        jobs = {v: pool.submit(make_bundle, tiny_bundle_cache, v) for v in ("omni", "audio")}
        return {v: job.result() for v, job in jobs.items()}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_slow(items)  # real-time multi-process tests are `slow` (tests/slow_rule.py): -m "not slow" is the quick loop
