"""`venus-export bench`: LLM conversion throughput and peak memory, streamed against naive.

A Qwen3-shaped checkpoint of at least the asked size (bf16, sharded, with the
real tokenizer layout) is generated, then converted to an F16 GGUF twice, each
in its own process: by the exporter (tensors streamed in row blocks) and by a
naive script that loads every tensor first and hands them to gguf's writer.
MB here is 2**20 bytes; throughput is GGUF bytes written per second of conversion.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from export.errors import ExportError
from export.special_tokens import EOS_TOKEN, PAD_TOKEN
from export.tiny import llm_tensors, make_config, write_shards
from export.tiny_tokenizer import write_tokenizer_files

MB = 2**20
BENCH_LLM = {"hidden_size": 2048, "intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 4,
             "head_dim": 128}
BENCH_VOCAB = 32000


def make_checkpoint(out: Path, size_mb: int, seed: int = 0) -> dict:
    """An LLM-only checkpoint whose llm.* tensors take at least size_mb in bf16."""
    out.mkdir(parents=True, exist_ok=True)
    write_tokenizer_files(out, seed)
    tok = json.loads((out / "added_tokens.json").read_text())
    h, f = BENCH_LLM["hidden_size"], BENCH_LLM["intermediate_size"]
    q = BENCH_LLM["num_attention_heads"] * BENCH_LLM["head_dim"]
    kv = BENCH_LLM["num_key_value_heads"] * BENCH_LLM["head_dim"]
    per_layer = 2 * (2 * h * q + 2 * h * kv + 3 * h * f)
    embeddings = 2 * 2 * BENCH_VOCAB * h
    layers = max(1, math.ceil((size_mb * MB - embeddings) / per_layer))
    config = make_config("audio", BENCH_VOCAB, tok[EOS_TOKEN], tok[PAD_TOKEN],
                         llm={**BENCH_LLM, "num_hidden_layers": layers})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    write_shards(out, llm_tensors(config, seed), max_shard_bytes=512 * MB)
    return config


def run_worker(mode: str, ckpt: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "export.bench_worker", mode, str(ckpt), str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise ExportError(f"The {mode} conversion failed: {proc.stderr.strip().splitlines()[-1:]}.")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_bench(size_mb: int, workdir: Path | None) -> int:
    if size_mb < 1:
        raise ExportError("--size-mb must be at least 1.")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        print(f"generating a {size_mb} MB checkpoint in {root} ...", flush=True)
        config = make_checkpoint(root / "ckpt", size_mb)
        src = sum(p.stat().st_size for p in (root / "ckpt").glob("*.safetensors"))
        print(f"checkpoint: {config['num_hidden_layers']} layers, hidden {config['hidden_size']}, "
              f"{src / MB:.0f} MB of safetensors", flush=True)
        streamed = run_worker("streamed", root / "ckpt", root / "streamed.gguf")
        (root / "streamed.gguf").unlink()
        naive = run_worker("naive", root / "ckpt", root / "naive.gguf")
    for r in (streamed, naive):
        rate = r["bytes"] / MB / r["seconds"]
        print(f"{r['mode']:8}: {r['bytes'] / MB:.0f} MB in {r['seconds']:.1f} s = {rate:.0f} MB/s, "
              f"peak RSS {r['peak_mb']:.0f} MB (baseline {r['baseline_mb']:.0f} MB, "
              f"largest tensor {r['largest_tensor_mb']:.0f} MB)")
    rate = streamed["bytes"] / MB / streamed["seconds"]
    print(f"export {rate:.0f} MB/s, peak {streamed['peak_mb']:.0f} MB (naive {naive['peak_mb']:.0f} MB)")
    return 0
