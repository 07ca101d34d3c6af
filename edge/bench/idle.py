"""`venus-edge bench idle`: what an always-on device costs while nobody speaks, and whether a long session grows.

Idle: the session (the embedded default unless told otherwise) listens to a quiet room in real time (a file of
low noise, about -70 dBFS, paced like a microphone); after a warm-up, the CPU time of every process of the
graph (the supervisor with its bus proxy, each node, anything they started) is read from the kernel over a set
time, with their resident memory at the end and how fast the journal grows. Goals: under 5 % of one core and
10 MB of journal per hour of silence.

`--hour`: one hour of conversation on the virtual clock (`--fast`): speech, delegations answered by a skill,
and barge-ins, scripted; the graph's resident memory is sampled along the session time, and its growth after
the first ten minutes is the last line.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil
import soundfile as sf

from edge.graph.supervised import ChildState
from edge.session import SessionConfig, make_supervisor, nodes_for

RATE = 16000


def quiet_room(path: Path, seconds: float, seed: int = 0) -> Path:
    """Low noise, as a microphone hears an empty room (written in blocks: an hour is 115 MB of PCM)."""
    rng = np.random.default_rng(seed)
    with sf.SoundFile(str(path), "w", RATE, 1, "PCM_16") as f:
        left = int(seconds * RATE)
        while left > 0:
            n = min(left, 60 * RATE)
            f.write((rng.standard_normal(n) * 10 ** (-70 / 20)).astype(np.float32))
            left -= n
    return path


def graph_processes() -> list[psutil.Process]:
    """This process (the supervisor and its bus proxy) and everything it started."""
    me = psutil.Process()
    return [me, *me.children(recursive=True)]


@dataclass
class Sample:
    cpu_s: dict[tuple[int, float], float]  # (pid, create time) -> user + system seconds
    rss: int
    journal: int


def sample(journal: Path) -> Sample:
    cpu, rss = {}, 0
    for p in graph_processes():
        try:
            t = p.cpu_times()
            cpu[(p.pid, p.create_time())] = t.user + t.system
            rss += p.memory_info().rss
        except psutil.Error:
            continue  # ended meanwhile
    size = sum(f.stat().st_size for f in journal.parent.glob(journal.name + "*") if f.is_file())
    return Sample(cpu, rss, size)


def names(sup) -> dict[int, str]:
    return {c.pid: c.name for c in sup.children.values()} | {psutil.Process().pid: "supervisor"}


def start(sup) -> tuple[threading.Thread, dict]:
    out: dict = {}
    runner = threading.Thread(target=lambda: out.setdefault("report", sup.run()), daemon=True)
    runner.start()
    deadline = time.monotonic() + 900
    while not sup.started and runner.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not sup.started:
        runner.join(10)
        why = out["report"].reason if "report" in out else "the graph did not start within 15 minutes"
        raise SystemExit(f"venus-edge bench idle: {why}")
    return runner, out


def idle(args: argparse.Namespace, work: Path) -> int:
    wav = quiet_room(work / "quiet.wav", args.warmup + args.seconds + 30)
    journal = work / "idle.journal"
    cfg = SessionConfig(mic=str(wav), speaker="null", journal=str(journal), frontend=args.frontend,
                        voice=args.voice or ("piper" if args.frontend == "default" else "null"), realtime=True,
                        chunk_ms=args.chunk_ms)
    sup = make_supervisor(cfg, nodes_for(cfg))
    runner, out = start(sup)
    time.sleep(args.warmup)  # models warm, first checkpoints written
    a, t_a = sample(journal), time.monotonic()
    time.sleep(args.seconds)
    b, t_b = sample(journal), time.monotonic()
    who = names(sup)
    sup.request_stop("the idle bench is over")
    runner.join(60)
    span = t_b - t_a
    per: dict[str, float] = {}
    for key, used in b.cpu_s.items():
        name = who.get(key[0], "other")
        per[name] = per.get(name, 0.0) + (used - a.cpu_s.get(key, 0.0)) / span * 100
    restarts = out["report"].restarts if "report" in out else {}
    print(f"{span:.0f} s of silence, {args.frontend} frontend, {args.chunk_ms} ms chunks; % of one core by process: "
          + ", ".join(f"{n} {v:.2f}" for n, v in sorted(per.items(), key=lambda kv: -kv[1]))
          + (f"; restarts {restarts}" if any(restarts.values()) else ""))
    cpu = sum(per.values())
    mb_hour = (b.journal - a.journal) / span * 3600 / 1e6
    print(f"idle cpu {cpu:.1f}% of a core, rss {b.rss / 1e6:.0f} MB, journal {mb_hour:.1f} MB/hour")
    return 0


# --- one hour on the virtual clock -----------------------------------------------------------------------------
def answer_skill(root: Path) -> Path:
    d = root / "answer"
    d.mkdir(parents=True)
    (d / "skill.json").write_text(json.dumps({
        "name": "answer", "version": "1.0", "description": "Answers at once.", "arguments": {"type": "object"},
        "entry": {"python": "skill.py:run"}}))
    (d / "skill.py").write_text(textwrap.dedent("""
        def run(arguments, context):
            return "It is twelve degrees and cloudy."
    """))
    return root


def hour_script(path: Path, minutes: int) -> Path:
    """Every minute: a reply, a delegation, and a barge-in that cuts a long reply (1 s chunks)."""
    lines = []
    for k in range(minutes):
        t = 60 * k
        lines += [f"{t + 2} speak Hello, I am listening.", f"{t + 10} delegate What is the weather in Paris?",
                  f"{t + 30} speak Let me tell you a long story about the sea and the ships on it, one by one.",
                  f"{t + 32} interrupt"]
    path.write_text("\n".join(lines) + "\n")
    return path


def graph_rss(sup) -> int | None:
    """Resident memory of the supervisor and its nodes (a skill's short-lived process is not the graph's);
    None while a node is not running (starting, restarting or already stopped)."""
    total = psutil.Process().memory_info().rss
    for c in sup.children.values():
        if c.state != ChildState.RUNNING or c.finished:
            return None
        try:
            total += psutil.Process(c.pid).memory_info().rss
        except psutil.Error:
            return None
    return total


def what_happened(journal: Path) -> str:
    from edge import messages as m
    from edge.timeline.journal import Journal

    j = Journal(journal)
    seen: dict[str, set] = {"replies played": set(), "delegations": set(), "results": set(), "barge-ins": set()}
    for _, msg in j.messages(m.PlaybackAck, m.DelegateRequest, m.BackendResult, m.Interrupt):
        if isinstance(msg, m.PlaybackAck) and msg.last:
            seen["replies played"].add(msg.speak_id)  # the recorder keeps every re-sent copy: count ids
        elif isinstance(msg, m.DelegateRequest):
            seen["delegations"].add(msg.id)
        elif isinstance(msg, m.BackendResult) and msg.kind == "result":
            seen["results"].add(msg.work_id)
        elif isinstance(msg, m.Interrupt):
            seen["barge-ins"].add(msg.epoch)
    return ", ".join(f"{len(v)} {k}" for k, v in seen.items())


def hour(args: argparse.Namespace, work: Path) -> int:
    minutes = int(args.minutes)
    wav = quiet_room(work / "hour.wav", minutes * 60)
    journal = work / "hour.journal"
    cfg = SessionConfig(mic=str(wav), speaker="null", journal=str(journal),
                        frontend=f"scripted:{hour_script(work / 'script.txt', minutes)}", voice="espeak",
                        realtime=False, chunk_ms=1000,
                        extra={"harness": {"skills": str(answer_skill(work / "skills")), "router": {"scripted": {
                            "rules": [{"match": ".", "capability": "answer", "arguments": {}}]}}}})
    sup = make_supervisor(cfg, nodes_for(cfg), virtual_clock=True)
    t0 = time.monotonic()
    runner, out = start(sup)
    samples: list[tuple[float, int]] = []  # (session minutes, RSS of the graph)
    while runner.is_alive():
        chunks = sup.node_stats.get("capture", {}).get("chunks", 0)
        rss = graph_rss(sup)
        if rss is not None and chunks < minutes * 60:
            samples.append((chunks / 60, rss))
        runner.join(0.25)
    report = out["report"]
    if not report.ok:
        print(f"venus-edge bench idle --hour: the session did not complete: {report.reason}", file=sys.stderr)
        return 1
    settle = min(10.0, minutes / 6)
    after = [(t, r) for t, r in samples if t >= settle]
    if len(after) < 2:
        print("venus-edge bench idle --hour: the session was too short to sample; give more --minutes",
              file=sys.stderr)
        return 1
    first, last, peak = after[0][1], after[-1][1], max(r for _, r in after)
    print(f"{minutes} min of session in {time.monotonic() - t0:.0f} s wall: {what_happened(journal)}; "
          f"restarts {sum(report.restarts.values())}; journal {journal.stat().st_size / 1e6:.0f} MB")
    print(f"rss {first / 1e6:.0f} MB at {after[0][0]:.1f} min, {last / 1e6:.0f} MB at {after[-1][0]:.1f} min, "
          f"peak {peak / 1e6:.0f} MB ({len(samples)} samples)")
    print(f"hour rss growth after {settle:.0f} min {100 * (last - first) / first:+.1f}% "
          f"({first / 1e6:.0f} -> {last / 1e6:.0f} MB over {after[-1][0] - after[0][0]:.0f} min of session)")
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench idle", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=120.0, help="measured time (default 120)")
    p.add_argument("--warmup", type=float, default=20.0, help="time after start before measuring (default 20)")
    p.add_argument("--frontend", default="default", help="the frontend (default: the embedded default)")
    p.add_argument("--voice", default=None, help="the voice (default: piper with the embedded default)")
    p.add_argument("--chunk-ms", type=int, default=1000, help="chunk length (default 1000)")
    p.add_argument("--hour", action="store_true", help="instead: a conversation on the virtual clock, RSS growth")
    p.add_argument("--minutes", type=float, default=60.0, help="--hour: session minutes (default 60)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="venus-edge-bench-idle-") as tmp:
        return hour(args, Path(tmp)) if args.hour else idle(args, Path(tmp))
