"""`venus-edge bench llm --bundle DIR`: the LLM stage inside the chunk loop against plain llama-cpp-python.

Both run in this process on the same GGUF with the same threads, context,
batch size and flash-attention setting. The chunk loop runs real chunks
(log-mel + audio graph, vision graph for Omni, then the chunk protocol with a
forced `<|speak|>` and free decoding up to the per-chunk cap, hidden states
on for spoken tokens); plain llama-cpp-python evaluates the same number of
prefill tokens per chunk, then samples and evaluates the same number of tokens
with the reference's sampling settings through its own sampler.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

from edge.frontend.base import Chunk, Frame


def speechy(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    phase = 2 * np.pi * np.cumsum(140 + 30 * np.sin(2 * np.pi * 0.7 * t)) / 16000
    voice = sum(np.sin(k * phase) / k for k in range(1, 6)) * (np.sin(2 * np.pi * 4 * t) > 0)
    return (0.2 * voice + 0.003 * rng.standard_normal(len(t))).astype(np.float32)


class Plain:
    """Plain llama-cpp-python on the same GGUF: evaluate a chunk's worth of tokens, then sample and evaluate."""

    def __init__(self, gguf: Path, args) -> None:
        from llama_cpp import Llama

        self.llm = Llama(str(gguf), n_ctx=args.n_ctx, n_batch=512, n_ubatch=512, n_threads=args.threads,
                         n_threads_batch=args.threads, flash_attn=False, verbose=False, seed=0)
        self.rng = np.random.default_rng(0)
        self.vocab = self.llm.n_vocab()

    def chunk(self, prefill: int, decode: int) -> tuple[float, float]:
        if self.llm.n_tokens + prefill + decode > self.llm.n_ctx():
            self.llm.reset()  # start over rather than slide: the chunk loop's window keeps it comparable
        prompt = [int(t) for t in self.rng.integers(100, self.vocab - 100, prefill)]
        t0 = time.perf_counter()
        self.llm.eval(prompt)
        t1 = time.perf_counter()
        for _ in range(decode):
            tok = self.llm.sample(top_k=20, top_p=0.8, min_p=0.0, temp=0.7, repeat_penalty=1.05)
            self.llm.eval([tok])
        return t1 - t0, time.perf_counter() - t1

    def close(self) -> None:
        self.llm.close()


def run(bundle: Path, args) -> dict:
    """Chunks of the loop and of plain llama-cpp-python interleaved, so machine load hits both alike."""
    from edge.bundle.settings import VenusSettings
    from edge.frontend.venus.frontend import VenusFrontend

    settings = VenusSettings.from_dict({
        "n_ctx": args.n_ctx, "kv_high": args.n_ctx - 64, "kv_low": args.n_ctx // 2, "threads": args.threads,
        "max_speak_tokens": args.speak_tokens, "forced": {"*": ["<|speak|>"]}})
    f = VenusFrontend(bundle, settings)
    plain = Plain(f.bundle.llm, args)
    tot = {k: 0.0 for k in ("v_pre_n", "v_pre_s", "v_dec_n", "v_dec_s", "p_pre_n", "p_pre_s", "p_dec_n",
                            "p_dec_s")}
    steps, per_chunk, stages = [], [], []
    try:
        for k in range(args.chunks + 1):
            frames = [Frame(k * 10**9, np.full((336, 448, 3), 40 + k % 100, np.uint8))] if f.vision else []
            chunk = Chunk(k, k * 10**9, (k + 1) * 10**9, speechy(1.0, k), frames)
            t0 = time.perf_counter()
            info = f.step(chunk).info
            step_s = time.perf_counter() - t0
            pre_s, dec_s = plain.chunk(info["prefill"], info["decode"])
            if k == 0:
                continue  # the first chunk pays one-time costs
            steps.append(step_s)
            stages.append((info["vision_ms"], info["audio_ms"], info["llm_ms"]))
            per_chunk.append((info["prefill"], info["decode"]))
            for side, vals in (("v", (info["prefill"], info["prefill_s"], info["decode"], info["decode_s"])),
                               ("p", (info["prefill"], pre_s, info["decode"], dec_s))):
                for key, val in zip(("pre_n", "pre_s", "dec_n", "dec_s"), vals):
                    tot[f"{side}_{key}"] += val
        gguf = f.bundle.llm
    finally:
        f.close()
        plain.close()
    rate = {side: {"prefill": tot[f"{side}_pre_n"] / tot[f"{side}_pre_s"],
                   "decode": tot[f"{side}_dec_n"] / tot[f"{side}_dec_s"]} for side in ("v", "p")}
    return {"gguf": gguf, "rate": rate, "rtf": float(np.mean(steps)) / 1.0,
            "stages": [float(np.median([st[i] for st in stages])) for i in range(3)],
            "prefill": int(round(np.mean([c[0] for c in per_chunk]))),
            "decode": int(round(np.mean([c[1] for c in per_chunk])))}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench llm", description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", required=True, type=Path, help="an exported Venus bundle")
    p.add_argument("--chunks", type=int, default=30, help="chunks to time (default 30, plus one warm-up)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--speak-tokens", type=int, default=20,
                   help="tokens per chunk, <|speak|> and <|chunk_eos|> included (the cap; default 20)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from edge.bundle.reader import BundleError

    try:
        r = run(args.bundle, args)
    except (BundleError, RuntimeError, ValueError) as exc:
        print(f"venus-edge bench llm: {exc}", file=sys.stderr)
        return 1
    print(f"bundle {args.bundle} ({r['gguf'].name}), {args.chunks} chunks, threads {args.threads}, "
          f"context {args.n_ctx}, {r['prefill']} prefill + {r['decode']} decode positions per chunk")
    print(f"{'':14} {'prefill tok/s':>14} {'decode tok/s':>13}")
    for side, label in (("v", "chunk loop"), ("p", "llama.cpp")):
        print(f"{label:14} {r['rate'][side]['prefill']:>14.1f} {r['rate'][side]['decode']:>13.1f}")
    vision, audio, llm = r["stages"]
    print(f"per chunk (median): vision {vision:.1f} ms, audio {audio:.1f} ms, llm {llm:.1f} ms")
    x, y = r["rate"]["v"]["decode"], r["rate"]["p"]["decode"]
    print(f"llm decode {x:.1f} tok/s vs llama.cpp {y:.1f} tok/s (ratio {x / y:.2f}), chunk rtf {r['rtf']:.3f}")
    return 0
