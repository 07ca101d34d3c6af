"""`venus-edge bench answers --set trust`: are the answers right, honest when unsure, never from another request?

The trust set (edge/bench/trust_set.py) is spoken in many voices and sent through a voice session (the embedded
default graph, replies transcribed from the speaker's recording) and through Wyoming's path (the Wyoming
server's recognizer, then its conversation handler), or both. Each reply is judged right, declined, asked back
or wrong (edge/bench/trust_score.py); each way ends with
`answers: right R%, declined D%, asked back A%, wrong W% over N (voice|wyoming)`.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from edge.bench.trust_score import tally_line, verdict
from edge.bench.trust_set import DEFAULT_SEED, Request, generate


def _moments(start: datetime, end: datetime) -> list[datetime]:
    return [start.replace(second=0, microsecond=0) + timedelta(minutes=k)
            for k in range(int((end - start).total_seconds() // 60) + 3)]


def _report(requests: list[Request], replies: list[str], heard: list[str], start: datetime, via: str,
            home: bool) -> None:
    moments = _moments(start, datetime.now().astimezone())
    verdicts = []
    for i, (r, reply) in enumerate(zip(requests, replies), 1):
        v = verdict(r, reply, moments, home)
        verdicts.append(v)
        h = f" (heard {heard[i - 1]!r})" if heard else ""
        print(f"{i:3d}. [{r.kind} {r.voice} {r.wpm}] {r.text!r}{h} -> {reply!r}: {v}")
    print(tally_line(verdicts, via), flush=True)


def via_wyoming(requests: list[Request], out: Path, args) -> None:
    """Each request as Wyoming serves it: its audio transcribed by the server's recognizer, then answered."""
    from edge.bench import spoken
    from edge.detect.asr import Transcriber
    from edge.wyoming.converse import Conversation
    from edge.wyoming.serve import DEFAULT_ASR

    asr = Transcriber(args.threads, DEFAULT_ASR, beam_size=5 if DEFAULT_ASR == "base" else 1)
    cfg: dict = {"dir": str(out / "wyoming"), "router": "embedded", "chat": "embedded"}
    if args.home:
        cfg["mcp"] = [{"name": "home", "url": args.home}]
    conv = Conversation(cfg)
    start = datetime.now().astimezone()
    heard, replies = [], []
    try:
        for r in requests:
            text = asr.transcribe(spoken.say(r.text, r.voice, r.wpm))
            heard.append(text)
            replies.append(conv.answer(text)[1] if text.strip() else "")
    finally:
        conv.close()
    _report(requests, replies, heard, start, "wyoming", bool(args.home))


def via_voice(requests: list[Request], out: Path, args) -> int:
    """The requests on one timeline through the embedded default graph; each reply cut from the recording."""
    from edge.bench.answers import make_input, replies_heard
    from edge.graph.supervisor import SupervisorSettings
    from edge.session import SessionConfig, run_session

    marks = make_input(out / "requests.wav", requests)  # type: ignore[arg-type]
    cfg = SessionConfig(mic=str(out / "requests.wav"), speaker=str(out / "replies.wav"), speaker_rate=24000,
                        journal=str(out / "session.journal"), realtime=False, frontend="default", voice="piper",
                        threads=args.threads, extra={})
    start = datetime.now().astimezone()
    report = run_session(cfg, settings=SupervisorSettings(hang_s=60.0))
    if not report.ok:
        print(f"venus-edge bench answers: the voice session did not complete: {report.reason}", file=sys.stderr)
        return 1
    replies = replies_heard(out / "replies.wav", marks, "base", args.threads)
    _report(requests, replies, [], start, "voice", bool(args.home))
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench answers --set trust", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=("trust",), default="trust")
    p.add_argument("--questions", type=int, default=60, help="how many requests (default 60)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the set's seed (default {DEFAULT_SEED})")
    p.add_argument("--via", choices=("voice", "wyoming", "both"), default="both")
    p.add_argument("--home", default=None, help="a Home Assistant MCP URL for the home-control requests")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="keep the input and the session's files here")
    args = p.parse_args(argv)
    if not 1 <= args.questions <= 500:
        print("venus-edge bench answers: --questions must be between 1 and 500.", file=sys.stderr)
        return 2
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="venus-bench-trust-"))
    out.mkdir(parents=True, exist_ok=True)
    requests = generate(args.questions, args.seed)
    print(f"bench answers: {len(requests)} spoken requests (trust, seed {args.seed}) in "
          f"{len(set(r.voice for r in requests))} voices; files in {out}", flush=True)
    t0 = time.perf_counter()
    code = 0
    if args.via in ("voice", "both"):
        code = via_voice(requests, out, args)
    if args.via in ("wyoming", "both"):
        via_wyoming(requests, out, args)
    print(f"(took {time.perf_counter() - t0:.0f} s)")
    return code
