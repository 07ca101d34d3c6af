"""A sweep killed after its first rows resumes where it stopped and gives the same table."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quant_helpers import SWEEP_TYPES, run_cli

QUALITY = ("size_mb", "kl_mean", "kl_p99", "top1", "ppl", "decision_agree", "delegate_agree", "n_chunks")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.is_file() else []


def test_killed_sweep_resumes_to_the_same_table(tiny_gguf, journal, sweep, tmp_path):
    out = tmp_path / "s"
    args = ["sweep", str(tiny_gguf), "--types", SWEEP_TYPES, "--journal", str(journal), "--threads", "1",
            "--no-progress", "-o", str(out)]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, "-m", "quant.cli", *args], cwd=root, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = out / "rows.jsonl"
    deadline = time.monotonic() + 60
    try:
        while len(_lines(rows)) < 2:  # the reference and the first quantized row
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "no row completed within a minute"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = [json.loads(line) for line in _lines(rows)]
    assert 2 <= len(before) < len(SWEEP_TYPES.split(","))

    rc, stdout, stderr = run_cli(*args)
    assert rc == 0, stderr
    resumed = json.loads((out / "results.json").read_text())["rows"]
    # rows finished before the kill are kept as they were, not measured again
    for old in before:
        assert old in resumed
    fresh = json.loads((sweep[0] / "results.json").read_text())["rows"]
    assert [r["type"] for r in resumed] == [r["type"] for r in fresh]
    for a, b in zip(resumed, fresh):
        assert a["status"] == b["status"] == "ok"
        for k in QUALITY:
            assert a[k] == b[k], (a["type"], k)
    verdict = stdout.strip().splitlines()[-1]
    assert verdict.split(" decode ")[0] == sweep[1].strip().splitlines()[-1].split(" decode ")[0]


def test_resume_refuses_a_different_input(tiny_gguf, sweep, tmp_path):
    text = tmp_path / "other.txt"
    text.write_text("A different evaluation text, long enough to give more than sixteen tokens of input. " * 4)
    rc, _, stderr = run_cli("sweep", str(tiny_gguf), "--types", "F16,Q8_0", "--text", str(text), "--threads", "1",
                            "--no-progress", "-o", str(sweep[0]))
    assert rc == 2
    assert "different" in stderr and "--fresh" in stderr and "Traceback" not in stderr


def test_two_sweeps_cannot_share_a_directory(tmp_path):
    from quant.state import SweepError, SweepState

    first = SweepState(tmp_path / "s", {"source": "a"})
    with pytest.raises(SweepError, match="another venus-quant sweep is writing"):
        SweepState(tmp_path / "s", {"source": "a"})
    del first  # the lock goes with its holder
    SweepState(tmp_path / "s", {"source": "a"})


def test_fresh_forgets_everything_made_for_the_old_input(tmp_path):
    from quant.state import SweepState

    out = tmp_path / "s"
    (out / "models").mkdir(parents=True)
    (out / "reference").mkdir()
    for p in ("models/Q4_K_M.gguf", "reference/logp.npy", "imatrix.npz"):
        (out / p).write_text("old")
    old = SweepState(out, {"source": "a"})
    old.add({"type": "F16", "status": "ok"})
    old.close()
    state = SweepState(out, {"source": "b"}, fresh=True)
    assert state.rows == {} and not list(out.glob("models/*")) and not list(out.glob("reference/*"))
    assert not (out / "imatrix.npz").exists()


def test_failed_rows_are_tried_again(tmp_path):
    from quant.state import SweepState

    state = SweepState(tmp_path / "s", {"input": "a"})
    state.add({"type": "Q4_K_M", "status": "failed", "error": "llama.cpp crashed (signal 9)"})
    state.add({"type": "F32", "status": "skipped", "error": "higher precision than the reference (F16)"})
    state.add({"type": "Q8_0", "status": "ok"})
    assert not state.done("Q4_K_M") and state.done("F32") and state.done("Q8_0")
