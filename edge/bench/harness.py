"""`venus-edge bench harness`: does background work disturb the chunk loop, how soon is a ready result
heard, and is anything lost or spoken stale.

1. Two real-time process-graph sessions (a scripted frontend, or with `--bundle DIR` a Venus bundle's chunk
   loop told to write the same delegates; silent input, a burst of delegates): the chunk loop's timing jitter
   (p99 of |step interval - chunk|) with 8 slow capabilities running at once (the general capability against
   a local OpenAI-compatible server that answers after a delay) and with none.
2. From the loaded session: completion (WorkEvent completed) to first audio (PlaybackAck start).
3. A 1,000-item soak of the harness core on a virtual clock with random restarts (edge.bench.harness_soak).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.messages import work_states as W
from edge.bench.harness_soak import run_soak
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal


class SlowChatServer:
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers every request after `delay_s`."""

    def __init__(self, delay_s: float) -> None:
        delay = delay_s

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(delay)
                text = f"Here is the answer to: {body['messages'][-1]['content']}"
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def bundle_script(delegates: int) -> dict:
    """Venus settings that make a bundle's model write the same burst: one delegate span per chunk from chunk 2,
    listen otherwise, and speak each result in the turn after it was prefilled."""
    forced: dict[str, list[str]] = {"*": ["<|listen|>"]}
    for i in range(delegates):
        forced[str(2 + i)] = ["<|speak|>", "<delegate>", f"Question number {i + 1}?", "</delegate>", "<|turn_eos|>"]
    return {"forced": forced, "forced_after_backend": ["<|speak|>", "Here is the answer.", "<|turn_eos|>"]}


def run_graph(tmp: Path, name: str, seconds: float, chunk_ms: int, delegates: int, url: str,
              bundle: Path | None = None) -> Journal:
    wav = tmp / "silence.wav"
    if not wav.exists():
        sf.write(wav, np.zeros(int(16000 * seconds), np.float32), 16000)
    extra: dict = {"harness": {"dir": str(tmp / f"{name}.harness"), "chat": {"url": url}, "default_timeout_s": 120,
                               "progress_after_s": 600}}
    if bundle is not None:
        frontend = f"bundle:{bundle}"
        extra["venus"] = bundle_script(delegates)
    else:
        script = tmp / f"{name}.txt"
        # A burst of delegates (one per chunk) early on; the scripted frontend speaks results when listening.
        script.write_text("".join(f"{2 + i} delegate Question number {i + 1}?\n" for i in range(delegates))
                          or "# idle\n")
        frontend = f"scripted:{script}"
    cfg = SessionConfig(mic=str(wav), speaker="null", journal=str(tmp / f"{name}.journal"),
                        frontend=frontend, voice="null", chunk_ms=chunk_ms, realtime=True, extra=extra)
    report = run_session(cfg)
    if not report.ok:
        raise RuntimeError(f"the {name} session failed: {report.reason}")
    return Journal(tmp / f"{name}.journal")


def step_starts(journal: Journal) -> list[tuple[int, int]]:
    """(chunk index, when its step began on the session clock) for every chunk decision."""
    return sorted((msg.index, rec.env.t_ns - msg.compute_ns) for rec, msg in journal.messages(m.ChunkDecision))


def jitter_ms(starts: list[tuple[int, int]], chunk_ms: int, window: tuple[int, int] | None = None) -> float:
    pairs = [(a, b) for a, b in zip(starts, starts[1:]) if b[0] == a[0] + 1]
    if window is not None:
        pairs = [(a, b) for a, b in pairs if window[0] <= a[1] and b[1] <= window[1]]
    dev = [abs((b[1] - a[1]) / 1e6 - chunk_ms) for a, b in pairs]
    if not dev:
        raise RuntimeError("no chunk intervals to measure; run a longer session")
    return float(np.percentile(dev, 99))


def running_window(journal: Journal, count: int) -> tuple[int, int, int]:
    """When all `count` tasks were running at once: from the last start to the first completion."""
    starts, ends = {}, {}
    for rec, msg in journal.messages(m.WorkEvent):
        if msg.state == W.RUNNING and msg.detail.startswith("attempt"):
            starts.setdefault(msg.work_id, rec.env.t_ns)
        elif msg.state in (W.COMPLETED, W.FAILED):
            ends.setdefault(msg.work_id, rec.env.t_ns)
    if len(starts) < count or len(ends) < count:
        raise RuntimeError(f"only {len(starts)} of {count} tasks started and {len(ends)} ended")
    return max(starts.values()), min(ends.values()), len(ends)


def first_audio_latencies(journal: Journal) -> list[float]:
    """Per result: ms from its completion to the first played sample of its reply."""
    completed = {msg.work_id: rec.env.t_ns for rec, msg in journal.messages(m.WorkEvent) if msg.state == W.COMPLETED}
    first: dict[str, int] = {}
    for _, ack in journal.messages(m.PlaybackAck):
        if ack.backend_id and ":r" in ack.backend_id:
            wid = ack.backend_id.rsplit(":r", 1)[0]
            first[wid] = min(first.get(wid, ack.t_start_ns), ack.t_start_ns)
    return sorted((first[w] - completed[w]) / 1e6 for w in first if w in completed)


def graph_checks(journal: Journal, store: Path) -> tuple[int, int]:
    """In a real session: delegate requests missing from the store (lost), and results spoken after expiry."""
    import sqlite3

    with sqlite3.connect(store) as db:
        stored = {row[0] for row in db.execute("SELECT id FROM items")}
    asked = {msg.id for _, msg in journal.messages(m.DelegateRequest)}
    expires = {msg.id: msg.expires_ns for _, msg in journal.messages(m.BackendResult)}
    stale = sum(1 for rec, msg in journal.messages(m.SpeakText)
                if msg.backend_id and 0 < expires.get(msg.backend_id, 0) < rec.env.t_ns)
    return len(asked - stored), stale


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench harness", description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=1000, help="work items in the soak (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--restart-p", type=float, default=0.01, help="chance of a harness restart per soak chunk")
    p.add_argument("--arrival-p", type=float, default=0.12, help="chance of a new delegate per soak chunk")
    p.add_argument("--chunk-ms", type=int, default=250, help="chunk length of the timing sessions")
    p.add_argument("--seconds", type=float, default=32.0, help="length of each timing session")
    p.add_argument("--slow-s", type=float, default=20.0, help="how long each slow capability takes")
    p.add_argument("--concurrent", type=int, default=8, help="slow capabilities running at once")
    p.add_argument("--workdir", default=None, help="keep journals and stores here (default: a temp dir)")
    p.add_argument("--bundle", type=Path, help="the timing sessions run a Venus bundle's chunk loop (told to write "
                                                "the same delegates) instead of a scripted frontend")
    a = p.parse_args(argv)
    if a.items < 1 or a.concurrent < 1 or a.chunk_ms < 20 or a.seconds < 5:
        p.error("--items and --concurrent must be positive, --chunk-ms at least 20 and --seconds at least 5")
    if a.bundle is not None and not (a.bundle / "manifest.json").is_file():
        p.error(f"{a.bundle} is not a bundle (no manifest.json); give the folder venus-export build wrote")
    tmp = Path(a.workdir or tempfile.mkdtemp(prefix="venus-bench-harness-"))
    tmp.mkdir(parents=True, exist_ok=True)
    server = SlowChatServer(a.slow_s)
    try:
        idle = run_graph(tmp, "idle", a.seconds, a.chunk_ms, 0, server.url, a.bundle)
        loaded = run_graph(tmp, "loaded", a.seconds, a.chunk_ms, a.concurrent, server.url, a.bundle)
    finally:
        server.close()
    t0, t1, _ = running_window(loaded, a.concurrent)
    idle_p99 = jitter_ms(step_starts(idle), a.chunk_ms, (t0, t1))  # the same stretch of session time
    load_p99 = jitter_ms(step_starts(loaded), a.chunk_ms, (t0, t1))
    n_load = sum(1 for x, y in zip(step_starts(loaded), step_starts(loaded)[1:]) if t0 <= x[1] and y[1] <= t1)
    lat = first_audio_latencies(loaded)
    g_lost, g_stale = graph_checks(loaded, tmp / "loaded.harness" / "work.sqlite")
    print(f"chunk loop ({a.chunk_ms} ms chunks): jitter p99 {load_p99:.2f} ms over {n_load} intervals with "
          f"{a.concurrent} slow capabilities running ({a.slow_s:.0f} s each), {idle_p99:.2f} ms idle")
    if lat:
        print(f"completion to first audio: first in queue {lat[0]:.0f} ms, p50 {np.percentile(lat, 50):.0f} ms, "
              f"max {lat[-1]:.0f} ms over {len(lat)} results (silence gap and one chunk boundary included)")
    else:
        print("completion to first audio: no result was spoken in the loaded session")
    print(f"process graph: {len(list(loaded.messages(m.DelegateRequest)))} delegates, lost {g_lost}, "
          f"stale spoken {g_stale}")
    t = time.monotonic()
    soak = run_soak(a.items, a.seed, a.restart_p, a.arrival_p, workdir=tmp / "soak")
    print(f"soak: {soak.items} items, {soak.restarts} restarts, {soak.interrupts} barge-ins, "
          f"{soak.virtual_s:.0f} s of session time in {time.monotonic() - t:.1f} s; "
          f"final states {json.dumps(soak.states, sort_keys=True)}")
    print(f"soak: {soak.spoken_results} results spoken, delivered twice {soak.double_delivered}, "
          f"lost {soak.lost}, stale spoken {soak.stale_spoken}")
    lost, stale = soak.lost + g_lost, soak.stale_spoken + g_stale
    print(f"harness jitter p99 {load_p99:.2f} ms (idle {idle_p99:.2f} ms), lost {lost}, stale spoken {stale}")
    return 0 if lost == 0 and stale == 0 and soak.double_delivered == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
