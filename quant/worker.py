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

from quant.chunks import ChunkStream, replay
from quant.engine import LlamaSession, peak_rss_mb
from quant.metrics import ChunkDecision, compare_distributions, decision_agreement, log_softmax, perplexity


@dataclass
class Job:
    model: str
    type: str
    imatrix: bool
    role: str  # "reference" or "candidate"
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


def measure(job: Job) -> dict:
    ref_dir = Path(job.ref_dir)
    rss0 = peak_rss_mb()
    session = LlamaSession(job.model, n_ctx=job.n_ctx, n_threads=job.n_threads, n_gpu_layers=job.n_gpu_layers,
                           use_mmap=job.use_mmap)
    import llama_cpp as ll

    row: dict = {"type": job.type, "imatrix": job.imatrix, "file": job.model,
                 "size_mb": Path(job.model).stat().st_size / 1e6,
                 "bpw": Path(job.model).stat().st_size * 8 / max(ll.llama_model_n_params(session.model), 1),
                 "load_s": session.load_s}
    try:
        if job.role == "reference":
            tokens = session.tokenize(job.text)[: job.max_tokens]
            if len(tokens) < 16:
                raise ValueError(f"the evaluation text gives only {len(tokens)} tokens; give at least 16")
            (ref_dir / "tokens.json").write_text(json.dumps(tokens))
        else:
            tokens = json.loads((ref_dir / "tokens.json").read_text())
        if len(tokens) + job.decode_tokens > session.n_ctx:
            raise ValueError(f"{len(tokens)} evaluation tokens do not fit a context of {session.n_ctx}; raise --ctx")

        # best of `repeats`: on a shared machine the fastest run is the one least disturbed by others
        prefill_s, decode_s = [], []
        for _ in range(max(job.repeats, 1)):
            session.reset()
            t0 = time.perf_counter()
            session.prefill(tokens)
            prefill_s.append(time.perf_counter() - t0)
            session.reset()
            session.prefill(tokens[:16])
            t0 = time.perf_counter()
            session.greedy(job.decode_tokens, tokens[16])
            decode_s.append(time.perf_counter() - t0)
        row["prefill_tps"] = len(tokens) / min(prefill_s)
        row["decode_tps"] = job.decode_tokens / min(decode_s)

        row.update(decision_agree=None, delegate_agree=None, n_chunks=0, decision_note="")
        if job.stream:
            stream = ChunkStream.load(Path(job.stream))
            try:
                decisions = replay(session, stream)
            except ValueError as e:  # no protocol tokens, or the stream does not fit
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

        session.reset()
        logits = session.prefill(tokens, all_logits=True)
        row["ppl"] = perplexity(logits, tokens)
        row["n_eval_tokens"] = len(tokens)
        if job.role == "reference":
            np.save(ref_dir / "logp.npy", log_softmax(logits).astype(np.float32))
            row.update(kl_mean=0.0, kl_p99=0.0, kl_max=0.0, top1=1.0)
        else:
            stats = compare_distributions(np.load(ref_dir / "logp.npy"), logits)
            row.update(kl_mean=stats.kl_mean, kl_p99=stats.kl_p99, kl_max=stats.kl_max, top1=stats.top1)
        del logits
    finally:
        session.close()
    row["status"] = "ok"
    return row


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = Job(**json.loads(Path(argv[0]).read_text()))
    try:
        row = measure(job)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"{job.type}: {e}", file=sys.stderr)
        return 2
    Path(job.out).write_text(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
