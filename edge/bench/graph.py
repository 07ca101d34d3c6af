"""`venus-edge bench graph`: what the process graph costs per chunk, against the same nodes in-process.

Per chunk: capture stamp -> the frontend's step call, plus the frontend's
output -> its receipt by the speech node. A scripted frontend speaks every
chunk (so both hops are used) and the speech decoder makes silence, so
only the graph is measured. Input is paced faster than real time (`--pace`).
Each case runs on the direct bus (nodes publish one hop to each other) and on
the proxy-only bus (every message through the supervisor's proxy), in turn.
With `--http` every case runs a second time with the observer and its HTTP
server attached (scraped once a second), to give what observing costs.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.bench.stats import pct
from edge.bench.wakeups import WakeupSampler
from edge.graph.endpoints import BUSES
from edge.graph.supervisor import SupervisorSettings
from edge.session import SessionConfig, make_supervisor, nodes_for
from edge.timeline.journal import Journal

SCRAPE_S = 1.0  # how often the bench reads /metrics while observing (Prometheus scrapes every 15-60 s)


@dataclass
class CaseResult:
    overheads_ms: list[float]  # per chunk, the first (start-up) left out
    messages: int  # bus messages in the journal
    wakeups: int  # of every thread of the graph while the session ran (edge.bench.wakeups)
    second_copies: int = 0  # direct bus: messages a node received on both paths (the proxy's copy dropped)


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


def _scrape(url: str, stop: threading.Event) -> None:
    while not stop.wait(SCRAPE_S):
        try:
            with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
                r.read()
        except OSError:
            pass  # the session is ending; the next case starts a new server


def run_case(work: Path, chunk_ms: int, seconds: float, pace: float, inprocess: bool, *,
             http: tuple[str, int] | None = None, bus: str = "direct") -> list[float]:
    """The per-chunk overheads of one session (what `venus-edge bench graph` prints a row of)."""
    return measure_case(work, chunk_ms, seconds, pace, inprocess, http=http, bus=bus).overheads_ms


def measure_case(work: Path, chunk_ms: int, seconds: float, pace: float, inprocess: bool, *,
                 http: tuple[str, int] | None = None, bus: str = "direct") -> CaseResult:
    tag = f"{chunk_ms}ms-{'inproc' if inprocess else 'proc'}" + ("-proxy" if bus == "proxy" else "") + \
        ("-http" if http else "")
    wav = work / f"noise-{chunk_ms}.wav"
    if not wav.exists():
        rng = np.random.default_rng(0)
        sf.write(str(wav), (rng.standard_normal(int(16000 * seconds)) * 0.01).astype(np.float32), 16000)
    n = int(seconds * 1000 / chunk_ms)
    script = work / f"script-{chunk_ms}.txt"
    script.write_text("".join(f"{k} speak ok.\n" for k in range(n)))
    cfg = SessionConfig(mic=str(wav), speaker="null", journal=str(work / f"{tag}.journal"), chunk_ms=chunk_ms,
                        pace=pace, frontend=f"scripted:{script}", voice="null", realtime=True)
    sup = make_supervisor(cfg, nodes_for(cfg), inprocess=inprocess, virtual_clock=not cfg.realtime,
                          settings=SupervisorSettings(bus=bus))
    server, stop, scraper = None, threading.Event(), None
    if http is not None:
        from edge.observe.observer import Observer
        from edge.observe.server import ObserveServer
        sup.watcher = Observer()
        server = ObserveServer(sup.watcher, *http)
        scraper = threading.Thread(target=_scrape, args=(server.url, stop), daemon=True)
        scraper.start()
    sampler = WakeupSampler(sup)
    try:
        report = sup.run()
    finally:
        wakeups = sampler.stop()
        stop.set()
        if scraper is not None:
            scraper.join(timeout=10)
        if server is not None:
            server.close()
    if not report.ok:
        raise RuntimeError(f"{tag} session failed: {report.reason}")
    journal = work / f"{tag}.journal"
    messages = sum(1 for _ in Journal(journal).records())
    second = sum(s.get("paths", {}).get("second_copies", 0) for s in report.node_stats.values())
    return CaseResult(overheads(journal)[1:], messages, wakeups, second)  # chunk 0 includes start-up


def _ratio_line(what: str, new: list[float], old: list[float], against: str) -> str:
    a50, b50, a99, b99 = pct(new, 50), pct(old, 50), pct(new, 99), pct(old, 99)
    return (f"{what}: p50 {a50:.3f} ms vs {b50:.3f} ms {against} (ratio {a50 / b50:.2f}), "
            f"p99 {a99:.3f} ms vs {b99:.3f} ms {against} (ratio {a99 / b99:.2f})")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench graph", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=20.0, help="input length per case (default 20)")
    p.add_argument("--pace", type=float, default=4.0, help="input speed-up over real time (default 4)")
    p.add_argument("--chunks", default="1000,100", help="chunk lengths in ms (default 1000,100)")
    p.add_argument("--bus", default="direct,proxy", help="buses to compare: direct (one hop between nodes, the "
                   "default of a session), proxy (every message through the supervisor's proxy); default both")
    p.add_argument("--http", metavar="HOST:PORT", help="also run every case with the observer serving /metrics "
                   "on this address (loopback), and print what it costs")
    args = p.parse_args(argv)
    http = None
    if args.http:
        from edge.observe.server import AddressError, parse_address
        try:
            http = parse_address(args.http)
        except AddressError as exc:
            text = str(exc) if "HOST:PORT" in str(exc) else f"--http {args.http} is not a loopback address; " \
                "the bench serves only on one, e.g. 127.0.0.1:8765"
            print(f"venus-edge bench graph: {text}", file=sys.stderr)
            return 2
    try:
        chunks = [int(c) for c in args.chunks.split(",")]
    except ValueError:
        print(f"venus-edge bench graph: --chunks needs chunk lengths in ms separated by commas, not {args.chunks!r}",
              file=sys.stderr)
        return 2
    buses = [b.strip() for b in args.bus.split(",")]
    if not buses or any(b not in BUSES for b in buses):
        print(f"venus-edge bench graph: --bus takes direct, proxy or both separated by a comma, not {args.bus!r}",
              file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="venus-edge-bench-graph-"))
    pooled: dict[tuple[str, bool, bool], list[float]] = {}
    wakeups: dict[str, list[int]] = {b: [0, 0] for b in buses}  # processes, no observer: wake-ups, messages
    print(f"{'chunk':>7} {'mode':>11} {'bus':>7} {'http':>5} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
          f"{'wake-ups/msg':>12} {'2nd copies/msg':>14}")
    for chunk_ms in chunks:
        for inprocess in (False, True):
            for observed in ((False, True) if http else (False,)):
                for bus in buses:
                    r = measure_case(work, chunk_ms, args.seconds, args.pace, inprocess,
                                     http=http if observed else None, bus=bus)
                    vals = r.overheads_ms
                    pooled.setdefault((bus, inprocess, observed), []).extend(vals)
                    if not inprocess and not observed:
                        wakeups[bus][0] += r.wakeups
                        wakeups[bus][1] += r.messages
                    mode = "in-process" if inprocess else "processes"
                    print(f"{chunk_ms:>5}ms {mode:>11} {bus:>7} {'on' if observed else 'off':>5} {len(vals):>5} "
                          f"{pct(vals, 50):>8.3f} {pct(vals, 99):>8.3f} {max(vals):>8.3f} "
                          f"{r.wakeups / max(1, r.messages):>12.1f} {r.second_copies / max(1, r.messages):>14.2f}",
                          flush=True)
    for bus in buses:
        x, y = pct(pooled[bus, False, False], 99), pct(pooled[bus, True, False], 99)
        print(f"graph overhead p99 {x:.3f} ms, in-process {y:.3f} ms, ratio {x / y:.2f} (bus {bus}, "
              f"{wakeups[bus][0] / max(1, wakeups[bus][1]):.1f} wake-ups per message)")
    if len(buses) == 2:
        print(_ratio_line("direct bus (processes)", pooled["direct", False, False], pooled["proxy", False, False],
                          "proxy"))
    if http:
        for bus in buses:
            print(_ratio_line(f"http observer (processes, bus {bus})", pooled[bus, False, True],
                              pooled[bus, False, False], "without"))
    return 0
