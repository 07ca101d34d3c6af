"""What one Ray task does on the node it lands on: quantize one candidate and measure it, or time a model on a board.

Inputs arrive through Ray's object store (the reference GGUF as a uint8 array,
read in place from shared memory, and the reference run's small files), or as
paths when the sweep declared its input and -o shared by every node. Each task
works in a temporary folder of its own and removes it; the reference GGUF is
written once per node and reused by later tasks there.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from export.errors import ExportError
from export.gguf_types import gguf_type
from export.quantize import quantize
from quant.measure import run_job
from quant.worker import SweepJob

Blob = np.ndarray | str  # file contents through the object store, or a path every node sees


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def _cached(blob: Blob, name: str) -> Path:
    """The file on this node: the shared path itself, or the bytes written once under the node's temp folder."""
    if isinstance(blob, str):
        return Path(blob)
    path = Path(tempfile.gettempdir()) / "venus-quant-ray" / name
    if path.is_file() and path.stat().st_size == blob.nbytes:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{name}.{os.getpid()}.part")  # tasks on one node may write it at once; one rename wins
    blob.tofile(tmp)
    tmp.replace(path)
    return path


def _write(files: dict[str, bytes], work: Path) -> Path:
    """The reference run's figures (tokens, log-probabilities, decisions) and the chunk stream, into work/."""
    ref = work / "reference"
    ref.mkdir(parents=True)
    for name, data in files.items():
        (work / name if name == "stream.json" else ref / name).write_bytes(data)
    return ref


def _job(spec: dict, model: Path, ref: Path, work: Path, role: str) -> SweepJob:
    stream = work / "stream.json"
    return SweepJob(model=str(model), type=spec["type"], imatrix=spec["imatrix"], role=role, ref_dir=str(ref),
                    text=spec["text"], out=str(work / "row.json"), stream=str(stream) if stream.is_file() else None,
                    **spec["measuring"])


def quality_task(reference: Blob, ref_files: dict[str, bytes], imatrix: dict | None, spec: dict
                 ) -> tuple[dict, np.ndarray | None]:
    """(the candidate's row, its GGUF as uint8 when spec["return_model"] asks: for board timings or --keep-models)."""
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="venus-quant-task-"))
    try:
        src = _cached(reference, spec["reference_name"])
        ref = _write(ref_files, work)
        dst = work / "model.gguf"
        t = gguf_type(spec["type"])
        try:
            quantize(src, dst, t, nthread=spec["measuring"]["n_threads"], imatrix=imatrix if spec["imatrix"] else None)
        except (ValueError, RuntimeError, ExportError) as e:
            row = {"type": t.name, "imatrix": spec["imatrix"], "status": "failed", "error": str(e)}
        else:
            row = run_job(_job(spec, dst, ref, work, "candidate"), work / "job.json") if spec["measure"] else \
                {"type": t.name, "imatrix": spec["imatrix"], "status": "ok"}
        model = np.fromfile(dst, dtype=np.uint8) if spec["return_model"] and row.get("status") == "ok" else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    row.update(node_id=_node_id(), task_start=started, task_end=time.time())
    return row, model


def speed_task(model: Blob, ref_files: dict[str, bytes], spec: dict) -> dict:
    """Load, prefill, decode and peak memory of one model on this node (a board), measured as the sweep measures."""
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="venus-quant-task-"))
    try:
        ref = _write({"tokens.json": ref_files["tokens.json"]}, work)
        path = Path(model) if isinstance(model, str) else work / "model.gguf"
        if not isinstance(model, str):
            model.tofile(path)
        row = run_job(_job(spec, path, ref, work, "speed"), work / "job.json")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    row.update(node_id=_node_id(), task_start=started, task_end=time.time())
    return row


def reference_files(ref_dir: Path, stream: Path) -> dict[str, bytes]:
    """The reference run's outputs every candidate is compared with, as bytes for the object store."""
    files = {n: (ref_dir / n).read_bytes() for n in ("tokens.json", "logp.npy", "decisions.json")
             if (ref_dir / n).is_file()}
    if stream.is_file():
        files["stream.json"] = stream.read_bytes()
    return files



def encoder_task(*args, **kwargs) -> list[dict]:
    """One encoder part's rows (quant.encoder_sweep.sweep_part over shared paths), each naming the node that made it."""
    from quant.encoder_sweep import sweep_part

    rows = sweep_part(*args, **kwargs)
    node = _node_id()
    return [{**r, "node_id": node} for r in rows]
