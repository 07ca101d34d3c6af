"""Measure one precision in a fresh process: `python -m quant.worker JOB.json`.

A fresh process per precision gives each one its own peak-memory figure and
keeps a crash inside llama.cpp from taking the sweep down with it. The
reference run writes the figures the candidates are compared with.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from edge.backends.llama import LlamaError, LlamaModel
from quant.chunks import ChunkStream, replay
from quant.metrics import ChunkDecision, compare_distributions, decision_agreement, log_softmax, perplexity


@dataclass
class SweepJob:
    model: str
    type: str
    imatrix: bool
    role: str  # "reference", "candidate", or "speed" (a board's load, prefill, decode and memory figures only)
    ref_dir: str  # the reference run writes here and candidates read from here
    text: str
    out: str  # where the row is written as JSON
    stream: str | None = None  # a saved ChunkStream
    max_tokens: int = 256
    n_ctx: int = 2048
    n_threads: int = 1
    n_gpu_layers: int = 0
    decode_tokens: int = 32
    repeats: int = 3  # timed runs of prefill and decode; the fastest is reported
    use_mmap: bool = True


def _decisions_json(ds: list[ChunkDecision]) -> list[dict]:
    return [asdict(d) for d in ds]


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (VmHWM), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def greedy(llm: LlamaModel, first: int, n: int) -> None:
    """Decode n tokens greedily, one llama_decode each, through the runtime's own decode step."""
    tok = first
    for _ in range(n):
        logits, _ = llm.step(tok, copy=False)
        tok = int(np.argmax(logits))


def measure(job: SweepJob) -> dict:
    ref_dir = Path(job.ref_dir)
    if not Path(job.model).is_file():
        raise FileNotFoundError(f"model file {job.model} does not exist")
    rss0 = peak_rss_mb()
    t0 = time.perf_counter()
    # flash attention fixed off, so that speeds of different precisions compare like for like
    llm = LlamaModel(Path(job.model), job.n_ctx, job.n_threads, job.n_gpu_layers, flash_attn=False,
                     use_mmap=job.use_mmap)
    row: dict = {"type": job.type, "imatrix": job.imatrix, "file": job.model,
                 "size_mb": Path(job.model).stat().st_size / 1e6,
                 "bpw": Path(job.model).stat().st_size * 8 / max(llm.n_params, 1),
                 "load_s": time.perf_counter() - t0}
    try:
        if job.role == "reference":
            tokens = llm.tokenize(job.text)[: job.max_tokens]
            if len(tokens) < 16:
                raise ValueError(f"the evaluation text gives only {len(tokens)} tokens; give at least 16")
            (ref_dir / "tokens.json").write_text(json.dumps(tokens))
        else:
            tokens = json.loads((ref_dir / "tokens.json").read_text())
        if len(tokens) + job.decode_tokens > llm.n_ctx:
            fix = "raise --ctx" if llm.n_ctx >= job.n_ctx else "the model was trained on no more; lower --max-tokens"
            raise ValueError(f"{len(tokens)} evaluation tokens do not fit a context of {llm.n_ctx}; {fix}")

        # best of `repeats`: on a shared machine the fastest run is the one least disturbed by others
        prefill_s, decode_s = [], []
        for _ in range(max(job.repeats, 1)):
            llm.clear()
            t0 = time.perf_counter()
            llm.prefill_tokens(tokens)
            prefill_s.append(time.perf_counter() - t0)
            llm.clear()
            llm.prefill_tokens(tokens[:16], want_logits=False)
            t0 = time.perf_counter()
            greedy(llm, tokens[16], job.decode_tokens)
            decode_s.append(time.perf_counter() - t0)
        row["prefill_tps"] = len(tokens) / min(prefill_s)
        row["decode_tps"] = job.decode_tokens / min(decode_s)

        if job.role == "speed":  # quality is measured once elsewhere: it does not depend on the machine
            row["peak_mb"] = peak_rss_mb()
            row["status"] = "ok"
            return row
        row.update(decision_agree=None, delegate_agree=None, n_chunks=0, decision_note="")
        if job.stream:
            stream = ChunkStream.load(Path(job.stream))
            try:
                decisions = replay(llm, stream)
            except (ValueError, LlamaError) as e:  # no protocol tokens, or the stream does not fit
                row["decision_note"] = str(e)
            else:
                row["n_chunks"] = len(decisions)
                row["speak_fraction"] = float(np.mean([d.control == "speak" for d in decisions])) if decisions else None
                if job.role == "reference":
                    (ref_dir / "decisions.json").write_text(json.dumps(_decisions_json(decisions)))
                    row.update(decision_agree=1.0, delegate_agree=1.0)
                else:
                    ref = [ChunkDecision(**d) for d in json.loads((ref_dir / "decisions.json").read_text())]
                    row["decision_agree"], row["delegate_agree"] = decision_agreement(ref, decisions)

        # Peak memory as the runtime would see it (weights, KV cache, last-token logits), taken before the
        # quality pass below allocates logits for every position and the float64 arrays of the comparison.
        row["peak_mb"] = peak_rss_mb()
        row["peak_delta_mb"] = row["peak_mb"] - rss0

        llm.clear()
        logits = llm.logits_all(tokens)
        row["ppl"] = perplexity(logits, tokens)
        row["n_eval_tokens"] = len(tokens)
        row["n_vocab"] = int(logits.shape[-1])  # a perplexity near this is chance: the report says so
        if job.role == "reference":
            np.save(ref_dir / "logp.npy", log_softmax(logits).astype(np.float32))
            row.update(kl_mean=0.0, kl_p99=0.0, kl_max=0.0, top1=1.0)
        else:
            stats = compare_distributions(np.load(ref_dir / "logp.npy"), logits)
            row.update(kl_mean=stats.kl_mean, kl_p99=stats.kl_p99, kl_max=stats.kl_max, top1=stats.top1)
        del logits
    finally:
        llm.close()
    row["status"] = "ok"
    return row


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = SweepJob(**json.loads(Path(argv[0]).read_text()))
    try:
        row = measure(job)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"{job.type}: {e}", file=sys.stderr)
        return 2
    Path(job.out).write_text(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
