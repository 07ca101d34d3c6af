"""`venus-edge bench graph`: what the process graph costs per chunk, against the same nodes in-process.

Per chunk: capture stamp -> the frontend's step call, plus the frontend's
output -> its receipt by the speech node. A scripted frontend speaks every
chunk (so both hops are used) and the speech decoder makes silence, so
only the graph is measured. Input is paced faster than real time (`--pace`).
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.bench.stats import pct
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal


def overheads(journal: Path) -> list[float]:
    """Per-chunk graph overhead in ms, from the journal."""
    j = Journal(journal)
    to_frontend: dict[int, int] = {}
    speak_chunk: dict[str, int] = {}
    to_speech: dict[int, int] = {}
    for _, msg in j.messages(m.ChunkDecision, m.SpeakText, m.PlaybackAck):
        if isinstance(msg, m.ChunkDecision):
            to_frontend[msg.index] = msg.recv_delay_ns
        elif isinstance(msg, m.SpeakText):
            speak_chunk[msg.id] = msg.index
        elif isinstance(msg, m.PlaybackAck) and msg.seq == 0 and msg.speak_id in speak_chunk:
            to_speech[speak_chunk[msg.speak_id]] = msg.recv_delay_ns
    return [(to_frontend[i] + to_speech[i]) / 1e6 for i in sorted(to_frontend) if i in to_speech]


def run_case(work: Path, chunk_ms: int, seconds: float, pace: float, inprocess: bool) -> list[float]:
    tag = f"{chunk_ms}ms-{'inproc' if inprocess else 'proc'}"
    wav = work / f"noise-{chunk_ms}.wav"
    if not wav.exists():
        rng = np.random.default_rng(0)
        sf.write(str(wav), (rng.standard_normal(int(16000 * seconds)) * 0.01).astype(np.float32), 16000)
    n = int(seconds * 1000 / chunk_ms)
    script = work / f"script-{chunk_ms}.txt"
    script.write_text("".join(f"{k} speak ok.\n" for k in range(n)))
    cfg = SessionConfig(mic=str(wav), speaker="null", journal=str(work / f"{tag}.journal"), chunk_ms=chunk_ms,
                        pace=pace, frontend=f"scripted:{script}", voice="null", realtime=True)
    report = run_session(cfg, inprocess=inprocess)
    if not report.ok:
        raise RuntimeError(f"{tag} session failed: {report.reason}")
    return overheads(work / f"{tag}.journal")[1:]  # the first chunk includes start-up


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench graph", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=20.0, help="input length per case (default 20)")
    p.add_argument("--pace", type=float, default=4.0, help="input speed-up over real time (default 4)")
    p.add_argument("--chunks", default="1000,100", help="chunk lengths in ms (default 1000,100)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="venus-edge-bench-graph-"))
    pooled: dict[bool, list[float]] = {False: [], True: []}
    print(f"{'chunk':>7} {'mode':>11} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for chunk_ms in (int(c) for c in args.chunks.split(",")):
        for inprocess in (False, True):
            vals = run_case(work, chunk_ms, args.seconds, args.pace, inprocess)
            pooled[inprocess] += vals
            mode = "in-process" if inprocess else "processes"
            print(f"{chunk_ms:>5}ms {mode:>11} {len(vals):>5} {pct(vals, 50):>8.3f} {pct(vals, 99):>8.3f} "
                  f"{max(vals):>8.3f}")
    x, y = pct(pooled[False], 99), pct(pooled[True], 99)
    print(f"graph overhead p99 {x:.3f} ms, in-process {y:.3f} ms, ratio {x / y:.2f}")
    return 0
