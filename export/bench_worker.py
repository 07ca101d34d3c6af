"""One LLM conversion in its own process, for honest peak-memory figures (bench and tests).

    python -m export.bench_worker streamed|naive CHECKPOINT OUT.gguf

Prints one JSON line: seconds, output bytes, baseline and peak RSS (MB), largest source tensor (MB).
"streamed" is the exporter's writer; "naive" loads every tensor first and hands them all to
gguf's GGUFWriter, the way a straightforward script would.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.llm_gguf import ARCH, Qwen3Params, add_metadata, convert_llm, llm_table
from export.vocab import read_vocab


def status_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (high-water) of this process. getrusage's ru_maxrss is not used: Linux carries
    it across exec from the parent, so a worker started by a large process would report the parent's peak."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise ExportError(f"/proc/self/status has no {field} line, so peak memory cannot be measured here.")


def naive(reader: CheckpointReader, out: Path) -> None:
    from gguf import GGUFWriter

    p = Qwen3Params.from_config(reader.config)
    rows = llm_table(reader, p)
    loaded = {r.gguf: reader.get(r.sources[0]) for r in rows}  # everything in memory first
    w = GGUFWriter(out, ARCH)
    add_metadata(w, reader, p, read_vocab(reader.path, p.vocab_size))
    for name, a in loaded.items():
        w.add_tensor(name, a.astype(np.float32 if a.ndim <= 1 else np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(argv: list[str]) -> int:
    mode, ckpt, out = argv[0], Path(argv[1]), Path(argv[2])
    reader = CheckpointReader(ckpt)
    largest = max(reader.info(n).nbytes for n in reader.names("llm."))
    base = status_mb("VmRSS")
    t0 = time.perf_counter()
    if mode == "streamed":
        convert_llm(reader, out, progress=False)
    else:
        naive(reader, out)
    seconds = time.perf_counter() - t0
    peak = status_mb("VmHWM")
    print(json.dumps({"mode": mode, "seconds": seconds, "bytes": out.stat().st_size, "baseline_mb": base,
                      "peak_mb": peak, "largest_tensor_mb": largest / 2**20}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
