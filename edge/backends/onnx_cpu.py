"""onnxruntime sessions with thread counts that behave on a small, shared CPU."""
from __future__ import annotations

from pathlib import Path

import onnxruntime as ort


def cpu_session(path: Path, threads: int = 1) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = max(1, threads)
    opts.inter_op_num_threads = 1
    # Spinning worker threads steal the other engineers' (and the LLM's) core on a 2-core machine.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
