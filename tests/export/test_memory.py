"""Peak memory of a conversion: under twice the largest tensor, measured in a separate process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from export.special_tokens import EOS_TOKEN, PAD_TOKEN
from export.tiny import llm_tensors, make_config, write_shards
from export.tiny_tokenizer import write_tokenizer_files


def test_streamed_conversion_peak_stays_under_twice_the_largest_tensor(tmp_path: Path):
    ckpt = tmp_path / "big-embedding"
    ckpt.mkdir()
    write_tokenizer_files(ckpt, 0)
    tok = json.loads((ckpt / "added_tokens.json").read_text())
    # 65,536 x 256 bf16 = 32 MB for each of the embedding and the head; everything else is small.
    config = make_config("audio", 65536, tok[EOS_TOKEN], tok[PAD_TOKEN], llm={"num_hidden_layers": 1})
    (ckpt / "config.json").write_text(json.dumps(config))
    write_shards(ckpt, llm_tensors(config, 0), max_shard_bytes=48 << 20)
    worker = [sys.executable, "-m", "export.bench_worker", "streamed", str(ckpt), str(tmp_path / "o.gguf")]
    proc = subprocess.run(worker, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["largest_tensor_mb"] == 32
    assert r["peak_mb"] - r["baseline_mb"] < 2 * r["largest_tensor_mb"], r
    assert (tmp_path / "o.gguf").stat().st_size > 2 * 32 * 2**20
