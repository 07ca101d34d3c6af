"""Helpers of the fault matrix: `venus-edge` run as a user runs it, and what its console may show."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WAV = ROOT / "edge" / "assets" / "two_plus_two.wav"
BARE = ["--voice", "null", "--fast", "--answer-wait", "0"]
# a session with no model: what is checked before anything starts shows at once
QUICK = ["--mic", str(WAV), "--frontend", "null", "--speaker", "null", *BARE]


def venus(args: list[str], tmp: Path, module: str = "edge.cli", timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this tree's packages, whatever the folder it runs in
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=tmp, env=env)


def one_sentence(r: subprocess.CompletedProcess, *words: str) -> str:
    """The run was refused before anything started, in one line naming `words`, with no traceback."""
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "could not start" not in r.stderr and "did not complete" not in r.stderr, r.stderr[-2000:]
    assert len(lines) == 1, r.stderr[-2000:]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def refused_setting(r: subprocess.CompletedProcess, *words: str) -> str:
    """As `one_sentence`, for argparse's refusal: its usage lines, then the one sentence."""
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    last = r.stderr.strip().splitlines()[-1]
    for w in words:
        assert w in last, last
    return last
