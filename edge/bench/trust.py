"""`venus-edge bench answers --set trust`: are the answers right, honest when unsure, never from another request?

The trust set (edge/bench/trust_set.py) is spoken in many voices and sent through a voice session (the embedded
default graph, replies transcribed from the speaker's recording) and through Wyoming's path (the Wyoming
server's recognizer, then its conversation handler), or both. Camera questions over generated scenes
(edge/bench/trust_scenes.py: signs, people, coloured walls, empty rooms) go through a second voice session whose
camera is an image folder of those scenes; Wyoming carries no frames, so they are voice-only. Each reply is
judged right, declined, asked back or wrong (edge/bench/trust_score.py); each way ends with
`answers: right R%, declined D%, asked back A%, wrong W% over N (voice|wyoming)` and a line per kind.
"""
from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from edge.bench.session_run import session_folder
from edge.bench.trust_score import by_kind, tally_line, verdict
from edge.bench.trust_set import DEFAULT_SEED, Request, generate

CAMERA_QUESTIONS = 20


def _moments(start: datetime, end: datetime) -> list[datetime]:
    return [start.replace(second=0, microsecond=0) + timedelta(minutes=k)
            for k in range(int((end - start).total_seconds() // 60) + 3)]


def _judge(requests: list[Request], replies: list[str], heard: list[str], start: datetime, home: bool,
           first: int = 1) -> list[str]:
    """Each reply's verdict, printed with the request; `home`: a Home Assistant was connected; `first`: the
    number the first request is printed with."""
    moments = _moments(start, datetime.now().astimezone())
    verdicts = []
    for i, (r, reply) in enumerate(zip(requests, replies)):
        v = verdict(r, reply, moments, home)
        verdicts.append(v)
        h = f" (heard {heard[i]!r})" if heard else ""
        kind = f"{r.kind} {r.scene}" if r.scene else r.kind
        print(f"{first + i:3d}. [{kind} {r.voice} {r.wpm}] {r.text!r}{h} -> {reply!r}: {v}")
    return verdicts


def via_wyoming(requests: list[Request], out: Path, args) -> list[str]:
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
    return _judge(requests, replies, heard, start, bool(args.home))


def via_voice(requests: list[Request], out: Path, args, camera: Path | None = None, first: int = 1
              ) -> list[str] | None:
    """The requests on one timeline through the embedded default graph, with `camera` as its camera (an image
    folder) if given; each reply cut from the recording. None when the session did not complete."""
    from edge.bench.answers import make_input, replies_heard
    from edge.graph.supervisor import SupervisorSettings
    from edge.session import SessionConfig, run_session

    out.mkdir(parents=True, exist_ok=True)
    marks = make_input(out / "requests.wav", requests)  # type: ignore[arg-type]
    cfg = SessionConfig(mic=str(out / "requests.wav"), speaker=str(out / "replies.wav"), speaker_rate=24000,
                        journal=str(out / "session.journal"), realtime=False, frontend="default", voice="piper",
                        threads=args.threads, camera=str(camera) if camera else None, extra={})
    start = datetime.now().astimezone()
    report = run_session(cfg, settings=SupervisorSettings(hang_s=60.0))
    if not report.ok:
        print(f"venus-edge bench answers: the voice session did not complete: {report.reason}", file=sys.stderr)
        return None
    replies = replies_heard(out / "replies.wav", marks, "base", args.threads)
    return _judge(requests, replies, [], start, bool(args.home), first)


def camera_set(n: int, seed: int, out: Path) -> tuple[list[Request], Path]:
    """`n` camera questions and the image folder that shows each one's scene for its slot on the timeline."""
    from edge.bench.answers import SLOT_S
    from edge.bench.trust_scenes import camera_requests, portrait, write_frames

    faces = portrait() is not None
    if not faces:
        print("bench answers: matplotlib's sample portrait is not installed, so no camera scene has a person in it "
              "(pip install matplotlib)", flush=True)
    pairs = camera_requests(n, seed, faces)
    return [r for r, _ in pairs], write_frames(out, [s for _, s in pairs], SLOT_S)


def main(argv: list[str]) -> int:
    from edge.bench.trust_scenes import CAMERA_SEED

    p = argparse.ArgumentParser(prog="venus-edge bench answers --set trust", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=("trust",), default="trust")
    p.add_argument("--questions", type=int, default=60, help="how many requests (default 60; 0: camera questions "
                                                             "only)")
    p.add_argument("--camera", type=int, default=CAMERA_QUESTIONS,
                   help=f"how many camera questions over generated scenes, voice only (default {CAMERA_QUESTIONS}; "
                        "0: none)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the set's seed (default {DEFAULT_SEED}; the "
                                                                   f"scenes' is {CAMERA_SEED} more)")
    p.add_argument("--via", choices=("voice", "wyoming", "both"), default="both")
    p.add_argument("--home", default=None, help="a Home Assistant MCP URL for the home-control requests")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="keep the input and the session's files here")
    args = p.parse_args(argv)
    if not 0 <= args.questions <= 500:
        print("venus-edge bench answers: --questions must be between 0 and 500.", file=sys.stderr)
        return 2
    if not 0 <= args.camera <= 200:
        print("venus-edge bench answers: --camera must be between 0 and 200.", file=sys.stderr)
        return 2
    if not args.questions and (not args.camera or args.via == "wyoming"):
        print("venus-edge bench answers: nothing to ask: give --questions, or --camera through the voice session.",
              file=sys.stderr)
        return 2
    out = session_folder(args.out, "trust")
    requests = generate(args.questions, args.seed)
    cam: list[Request] = []
    frames = None
    if args.camera and args.via != "wyoming":
        cam, frames = camera_set(args.camera, args.seed + CAMERA_SEED, out / "camera")
    print(f"bench answers: {len(requests)} spoken requests (trust, seed {args.seed}) in "
          f"{len(set(r.voice for r in requests))} voices, and {len(cam)} camera questions over generated scenes "
          f"(voice only); files in {out}", flush=True)
    t0 = time.perf_counter()
    code = 0
    if args.via in ("voice", "both"):
        plain = via_voice(requests, out, args) if requests else []
        seen = via_voice(cam, out / "camera", args, frames, len(requests) + 1) if cam and plain is not None else []
        if plain is None or seen is None:
            code = 1
        else:
            print(tally_line(plain + seen, "voice"))
            print(by_kind(requests + cam, plain + seen, "voice"))
            if cam:
                right = sum(v == "right" for v in seen)
                print(f"camera: right {100 * right / len(cam):.0f}% over {len(cam)} generated scenes (voice only: "
                      f"Wyoming carries no frames; goal 90%)", flush=True)
    if args.via in ("wyoming", "both") and requests:
        verdicts = via_wyoming(requests, out, args)
        note = f"; the {len(cam)} camera questions are voice-only: Wyoming carries no frames" if cam else \
            "; camera questions are voice-only: Wyoming carries no frames"
        print(tally_line(verdicts, "wyoming", note))
        print(by_kind(requests, verdicts, "wyoming"), flush=True)
    print(f"(took {time.perf_counter() - t0:.0f} s)")
    return code
