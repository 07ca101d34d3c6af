"""One precision measured in a fresh `python -m quant.worker` process, on whichever machine calls it.

The local sweep, each shard and every Ray task measure through here, so a row
means the same wherever it was made.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from quant.worker import SweepJob


def run_job(job: SweepJob, job_path: Path) -> dict:
    """The worker's row for `job`, or a failed row that says why in one line (a crash never ends the caller)."""
    job_path.write_text(json.dumps(asdict(job)))
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "quant.worker", str(job_path)], capture_output=True, text=True,
                          env=env)
    job_path.unlink(missing_ok=True)
    row_path = Path(job.out)
    if proc.returncode == 0 and row_path.is_file():
        row = json.loads(row_path.read_text())
        row_path.unlink()
        row["host"] = socket.gethostname()
        return row
    if proc.returncode < 0:
        why = f"llama.cpp crashed (signal {-proc.returncode})"
    else:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        why = lines[-1] if lines else f"the measuring process exited with code {proc.returncode}"
    return {"type": job.type, "imatrix": job.imatrix, "status": "failed", "error": why,
            "crashed": proc.returncode < 0, "host": socket.gethostname()}
