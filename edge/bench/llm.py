"""`venus-edge bench llm --bundle DIR`: the LLM stage inside the chunk loop against plain llama-cpp-python.

Both run in this process on the same GGUF with the same threads, context,
batch size and flash-attention setting. The chunk loop runs real chunks
(log-mel + audio graph, vision graph for Omni, then the chunk protocol with a
forced `<|speak|>` and free decoding up to the per-chunk cap, hidden states
on for spoken tokens); plain llama-cpp-python evaluates the same number of
prefill tokens per chunk, then samples and evaluates the same number of tokens
with the reference's sampling settings through its own sampler, starting at
the same position as the chunk's unit (on a small model attention over the
context is most of a token's cost, so a baseline that restarted from an empty
context while the loop's KV window slid would be measured on shorter contexts).
With `--chunks 60` the window of an Omni bundle slides; `--no-compact` leaves
the hole a slide makes in the KV cache, as the chunk loop did before.

The chunk loop's LLM always runs right after the encoders' burst of CPU work,
and on a busy machine where a piece of work falls in that cycle changes how
long it waits for a core (measured: the same CPU time took 4 to 9 times as
long by the wall clock, depending on the phase, at load 16 on 2 cores). So
on every other chunk plain llama.cpp runs right after the same encoder work
(the chunk's frame through the vision graph again, its audio through a second
audio encoder on the same graph; outputs unused), and that is the baseline;
the ratio against plain llama.cpp run alone (the layout before) is printed
beside it, and `--no-replay` never replays. Each side's thread CPU time is
measured beside the wall clock: what the work costs, whatever the load (it
still counts the cache misses of a run that follows the encoders, which is
why the baseline follows them too).
"""
from __future__ import annotations

import argparse
import logging
import os
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

    def align(self, position: int) -> None:
        """Untimed: bring the context to `position`, where the chunk loop's unit starts, so both sides attend
        over the same number of positions (the loop's KV window slides; attention cost grows with position)."""
        if self.llm.n_tokens > position:
            self.llm.n_tokens = position  # the next eval drops the cache past it
        if self.llm.n_tokens < position:
            self.llm.eval([int(t) for t in self.rng.integers(100, self.vocab - 100, position - self.llm.n_tokens)])

    def chunk(self, prefill: int, decode: int, at: int) -> tuple[float, float, float, float]:
        """Wall and thread CPU seconds: prefill, decode, prefill CPU, decode CPU."""
        self.align(at)
        prompt = [int(t) for t in self.rng.integers(100, self.vocab - 100, prefill)]
        t0, c0 = time.perf_counter(), time.thread_time()
        self.llm.eval(prompt)
        t1, c1 = time.perf_counter(), time.thread_time()
        for _ in range(decode):
            tok = self.llm.sample(top_k=20, top_p=0.8, min_p=0.0, temp=0.7, repeat_penalty=1.05)
            self.llm.eval([tok])
        return t1 - t0, time.perf_counter() - t1, c1 - c0, time.thread_time() - c1

    def close(self) -> None:
        self.llm.close()


# The chunk loop and plain llama.cpp, on the chunks where plain runs after the same encoder work, and alone.
SIDES = ("loop_after", "loop_alone", "plain_after", "plain_alone")
KEYS = ("pre_n", "pre_s", "pre_cpu", "dec_n", "dec_s", "dec_cpu")


def rates(tot: dict[str, float]) -> dict[str, float]:
    """tok/s by the wall clock and by thread CPU time, for prefill and decode (nan with nothing measured)."""
    def div(n: float, s: float) -> float:
        return n / s if s > 0 else float("nan")

    return {"prefill": div(tot["pre_n"], tot["pre_s"]), "decode": div(tot["dec_n"], tot["dec_s"]),
            "prefill_cpu": div(tot["pre_n"], tot["pre_cpu"]), "decode_cpu": div(tot["dec_n"], tot["dec_cpu"])}


def run(bundle: Path, args) -> dict:
    """Chunks of the loop and of plain llama-cpp-python interleaved, so machine load hits both alike."""
    from edge.bundle.settings import VenusSettings
    from edge.frontend.venus.encoders import AudioEncoder
    from edge.frontend.venus.frontend import VenusFrontend, graph

    settings = VenusSettings.from_dict({
        "n_ctx": args.n_ctx, "kv_high": args.n_ctx - 64, "kv_low": args.n_ctx // 2, "threads": args.threads,
        "max_speak_tokens": args.speak_tokens, "forced": {"*": ["<|speak|>"]}, "kv_compact_mb": 0 if args.no_compact else 256})
    f = VenusFrontend(bundle, settings)
    plain = Plain(f.bundle.llm, args)
    # A second audio encoder on the same graph: the replay must not advance the loop's own audio stream.
    runner = graph(f.bundle, "audio", settings)
    echo = AudioEncoder(runner, getattr(runner, "input_shapes", None) or {}, f.bundle.runtime.audio)
    tot = {side: dict.fromkeys(KEYS, 0.0) for side in SIDES}
    steps, per_chunk, stages = [], [], []
    try:
        for k in range(args.chunks + 1):
            frames = [Frame(k * 10**9, np.full((336, 448, 3), 40 + k % 100, np.uint8))] if f.vision else []
            chunk = Chunk(k, k * 10**9, (k + 1) * 10**9, speechy(1.0, k), frames)
            t0 = time.perf_counter()
            info = f.step(chunk).info
            step_s = time.perf_counter() - t0
            replay = not args.no_replay and k % 2 == 1
            plain.align(info["prefill_at"])  # untimed, and before the replay: the replay is what the LLM follows
            if replay:  # the work the loop's LLM followed, again; its output is not used
                if frames:
                    f.vision.encode(frames[-1].image)
                echo.encode(chunk.audio)
            measured = plain.chunk(info["prefill"], info["decode"], info["prefill_at"])
            if not replay and not args.no_replay:
                echo.encode(chunk.audio)  # keeps its stream in step with the loop's, outside any timing
            if k == 0:
                continue  # the first chunk pays one-time costs
            steps.append(step_s)
            stages.append((info["vision_ms"], info["audio_ms"], info["llm_ms"]))
            per_chunk.append((info["prefill"], info["decode"]))
            loop = (info["prefill_s"], info["prefill_cpu_s"], info["decode_s"], info["decode_cpu_s"])
            group = "after" if replay else "alone"
            for side, (pre_s, pre_cpu, dec_s, dec_cpu) in (
                    (f"loop_{group}", loop), (f"plain_{group}", (measured[0], measured[2], measured[1], measured[3]))):
                for key, val in zip(KEYS, (info["prefill"], pre_s, pre_cpu, info["decode"], dec_s, dec_cpu)):
                    tot[side][key] += val
        gguf, slides = f.bundle.llm, int(info["slides"])
    finally:
        f.close()
        plain.close()
    both = {name: rates({key: tot[f"{name}_after"][key] + tot[f"{name}_alone"][key] for key in KEYS})
            for name in ("loop", "plain")}
    return {"gguf": gguf, "rtf": float(np.mean(steps)) / 1.0, "slides": slides,
            "rate": {**{side: rates(tot[side]) for side in SIDES}, **both},
            "replayed": tot["plain_after"]["dec_n"] > 0,
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
    p.add_argument("--no-compact", action="store_true",
                   help="leave the KV cache's hole after a slide of the window (as before; see kv_window.py)")
    p.add_argument("--no-replay", action="store_true",
                   help="never run plain llama.cpp right after the same encoder work (the layout before)")
    args = p.parse_args(argv)
    if args.chunks < 1:
        print("venus-edge bench llm: --chunks must be at least 1.", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING)
    from edge.bundle.reader import BundleError

    load0 = os.getloadavg()[0]
    try:
        r = run(args.bundle, args)
    except (BundleError, RuntimeError, ValueError) as exc:
        print(f"venus-edge bench llm: {exc}", file=sys.stderr)
        return 1
    print(f"bundle {args.bundle} ({r['gguf'].name}), {args.chunks} chunks, threads {args.threads}, "
          f"context {args.n_ctx}, {r['prefill']} prefill + {r['decode']} decode positions per chunk; "
          f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} cores); "
          f"the KV window slid {r['slides']} times ({'not ' if args.no_compact else ''}compacted after)")
    print(f"{'':34} {'prefill tok/s':>14} {'decode tok/s':>13} {'prefill tok/CPU s':>18} {'decode tok/CPU s':>17}")
    rows = [("loop", "chunk loop"), ("plain", "llama.cpp")]
    if r["replayed"]:
        rows += [("plain_after", "llama.cpp after the encoders"), ("plain_alone", "llama.cpp alone")]
    for side, label in rows:
        q = r["rate"][side]
        print(f"{label:34} {q['prefill']:>14.1f} {q['decode']:>13.1f} {q['prefill_cpu']:>18.1f} {q['decode_cpu']:>17.1f}")
    vision, audio, llm = r["stages"]
    print(f"per chunk (median): vision {vision:.1f} ms, audio {audio:.1f} ms, llm {llm:.1f} ms")
    q = r["rate"]
    after, group = r["replayed"], "after" if r["replayed"] else "alone"
    loop, base = q[f"loop_{group}"], q[f"plain_{group}"]
    cpu = {k: loop[f"{k}_cpu"] / base[f"{k}_cpu"] for k in ("prefill", "decode")}
    print(f"llm prefill {loop['prefill']:.1f} tok/s vs llama.cpp {base['prefill']:.1f} tok/s "
          f"(ratio {loop['prefill'] / base['prefill']:.2f}, CPU time ratio {cpu['prefill']:.2f})")
    if after:
        la, pa = q["loop_alone"], q["plain_alone"]
        print(f"against llama.cpp run alone (as before): prefill ratio {la['prefill'] / pa['prefill']:.2f}, "
              f"decode ratio {la['decode'] / pa['decode']:.2f}")
    x, y = loop["decode"], base["decode"]
    print(f"llm decode {x:.1f} tok/s vs llama.cpp {y:.1f} tok/s (ratio {x / y:.2f}, CPU time ratio "
          f"{cpu['decode']:.2f}), chunk rtf {r['rtf']:.3f}")
    return 0
