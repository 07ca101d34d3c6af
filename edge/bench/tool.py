"""`venus-edge bench tool`: a spoken question to a local tool, timed from the end of the request to its answer heard.

One real-time session through the whole graph, as a user runs it with
`--harness`: the question said by the Piper voice into the microphone (a
file paced in real time), the embedded default frontend (or `--script FILE`
in its place), the harness with the third-party time server (mcp-server-time
over stdio) and the embedded router with its rules-first fast path, and the
Piper voice. From the journal, in session time: the request's last sample,
the frontend's delegate, the harness's routing and its tool call's
completion, the result's release to the frontend, its words handed to
speech, and their first sample played. Every stage is printed, so the
largest part of the wait can be seen.

The last line is `tool answer heard <S> s after the request (<route>)`.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.messages import work_states as W
from edge.audio_format import RATE
from edge.timeline.journal import Journal

NS = 1_000_000_000
LEAD_S = 1.0  # silence before the question
TAIL_S = 14.0  # silence after it, for the answer to come


@dataclass
class Stages:
    request_end_ns: int
    marks: list[tuple[str, int]]  # (what happened, session time), in order
    answer: str
    route: str


def find_stages(journal: Journal, request_end_ns: int) -> Stages | None:
    """The first delegated work item's way from request to heard answer; None if no answer was heard."""
    delegates = [(rec.env.t_ns, msg) for rec, msg in journal.messages(m.DelegateRequest)]
    if not delegates:
        return None
    t_delegate, delegate = delegates[0]
    marks = [("frontend delegated", t_delegate)]
    route = "?"
    for rec, ev in journal.messages(m.WorkEvent):
        if ev.work_id != delegate.id:
            continue
        if ev.detail.startswith("routed"):
            marks.append((ev.detail, rec.env.t_ns))
            route = str(ev.info.get("route") or "?")
        elif ev.state in (W.COMPLETED, W.FAILED):
            marks.append((f"tool {ev.state}", rec.env.t_ns))
    results = [(rec.env.t_ns, r) for rec, r in journal.messages(m.BackendResult) if r.work_id == delegate.id]
    if not results:
        return None
    t_result, result = results[-1]
    marks.append(("result released to the frontend", t_result))
    speaks = [(rec.env.t_ns, s) for rec, s in journal.messages(m.SpeakText) if s.backend_id == result.id]
    acks = sorted(a.t_start_ns for _, a in journal.messages(m.PlaybackAck) if a.backend_id == result.id)
    if not speaks or not acks:
        return None
    marks.append(("its words handed to speech", speaks[0][0]))
    marks.append(("first sample heard", acks[0]))
    return Stages(request_end_ns, marks, " ".join(s.text for _, s in speaks), route)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench tool", description=__doc__.split("\n\n")[0])
    p.add_argument("--question", default="What time is it in Tokyo?")
    p.add_argument("--script", help="a scripted frontend file in place of the embedded default (its delegate "
                                    "comes at the chunk the script names)")
    p.add_argument("--router", default="embedded", help="the harness router, a name or JSON (default: embedded, "
                                                         "rules first)")
    p.add_argument("--chunk-ms", type=int, default=1000)
    p.add_argument("--out", type=Path, help="keep the session's journal and reply here (default: a temporary folder)")
    args = p.parse_args(argv)
    try:
        import mcp_server_time  # noqa: F401
        from edge.speech.piper.voice import PiperVoice
        from kernels.resample import resample
        piper = PiperVoice()
    except (ImportError, OSError, FileNotFoundError) as exc:
        print(f"venus-edge bench tool: {exc}; install the harness and models extras.", file=sys.stderr)
        return 2
    from edge.session import SessionConfig, run_session

    out = args.out or Path(tempfile.mkdtemp(prefix="venus-bench-tool-"))
    out.mkdir(parents=True, exist_ok=True)
    said = resample(piper.sentence_audio(args.question), piper.sample_rate, RATE).astype(np.float32)
    mic = np.zeros(int((LEAD_S + TAIL_S) * RATE) + len(said), np.float32)
    mic[int(LEAD_S * RATE):int(LEAD_S * RATE) + len(said)] = 0.8 * said
    sf.write(str(out / "question.wav"), mic, RATE)
    request_end_ns = int((LEAD_S + len(said) / RATE) * NS)
    router = json.loads(args.router) if args.router.startswith("{") else args.router
    harness = {"dir": str(out / "harness"), "router": router,
               "mcp": [{"name": "time", "command": sys.executable, "args": ["-m", "mcp_server_time"]}]}
    cfg = SessionConfig(mic=str(out / "question.wav"), speaker=str(out / "reply.wav"), journal=str(out / "s.journal"),
                        realtime=True, chunk_ms=args.chunk_ms, voice="piper",
                        frontend=f"scripted:{args.script}" if args.script else "default",
                        extra={"harness": harness})
    report = run_session(cfg)
    if not report.ok:
        print(f"venus-edge bench tool: the session did not complete: {report.reason}", file=sys.stderr)
        return 1
    stages = find_stages(Journal(out / "s.journal"), request_end_ns)
    print(f"question {args.question!r} ends at {request_end_ns / NS:.2f} s; journal {out / 's.journal'}")
    if stages is None:
        print("tool answer never heard: no delegate, or its result was not spoken (see the journal)", file=sys.stderr)
        return 1
    before = request_end_ns
    for what, t in stages.marks:
        print(f"  {what:<48} {t / NS:7.2f} s  (+{(t - before) / NS:.2f} s)")
        before = t
    print(f"  answer: {stages.answer!r}")
    print(f"tool answer heard {(stages.marks[-1][1] - request_end_ns) / NS:.2f} s after the request ({stages.route})")
    return 0
