"""`venus-edge bench chat`: are stories, explanations and descriptions answered locally, at length?

A seeded set of spoken requests (edge/bench/chat_set.py) in voices no test
uses is placed on one timeline, one every `--slot-s` seconds, and run through
the real embedded default graph. Each request is scored from the journal,
from what the assistant decided in its slot: answered locally (no delegate
span), at least MIN_WORDS words said, no refusal and no "as an AI" phrase.
The last line: `chat <G>% good over <Q> requests (local <L>, at length <W>,
refusals <R>, median <M> words)`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from edge.bench.chat_set import MIN_WORDS, Request, Scored, generate, score
from edge.bench.session_run import add_model_flags, model_extra, model_flags_problem, session_folder


LEAD_S = 0.5  # silence before the first request


def make_input(path: Path, requests: list[Request], slot_s: float) -> list[float]:
    """The requests on one timeline, each in its own voice; returns each one's start in seconds."""
    from edge.audio_format import RATE
    from edge.bench import spoken

    audio = np.zeros(int((len(requests) * slot_s + 2.0) * RATE), np.float32)
    starts = []
    for i, r in enumerate(requests):
        clip = spoken.say(r.text, r.voice, r.wpm)
        start = i * slot_s + LEAD_S
        k = int(start * RATE)
        audio[k:k + len(clip)] += 0.8 * clip
        starts.append(start)
    spoken.write(path, audio)
    return starts


def slots(journal: Path, starts: list[float], chunk_s: float) -> list[tuple[str, str, bool]]:
    """Per request: (what was heard, what the assistant said, whether it delegated), from the decisions."""
    from edge import messages as m
    from edge.timeline.journal import Journal

    out = [["", [], False] for _ in starts]
    for _, msg in Journal(journal).messages(m.ChunkDecision):
        t = msg.index * chunk_s
        i = max((k for k, s in enumerate(starts) if s <= t), default=None)
        if i is None:
            continue
        if msg.user_text and not out[i][0]:
            out[i][0] = msg.user_text
        if msg.text:
            out[i][1].append(msg.text)
        out[i][2] = out[i][2] or msg.delegates > 0
    return [(heard, " ".join(said), delegated) for heard, said, delegated in out]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench chat", description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=15, help="how many requests (default 15)")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--slot-s", type=float, default=30.0, help="seconds from one request to the next (default 30)")
    add_model_flags(p)
    p.add_argument("--out", help="keep the input and journal here")
    p.add_argument("--rescore", action="store_true",
                   help="score the run kept in --out again (same --requests, --seed and --slot-s), without running it")
    args = p.parse_args(argv)
    if not 1 <= args.requests <= 200:
        print("venus-edge bench chat: --requests must be between 1 and 200.", file=sys.stderr)
        return 2
    if args.slot_s < 10:
        print("venus-edge bench chat: --slot-s must be at least 10 (a request and the start of its answer).",
              file=sys.stderr)
        return 2
    if args.rescore and not (args.out and (Path(args.out) / "session.journal").is_file()):
        print("venus-edge bench chat: --rescore needs --out naming the folder of a kept run (its session.journal).",
              file=sys.stderr)
        return 2
    problem = model_flags_problem(args)
    if problem:
        print(f"venus-edge bench chat: {problem}", file=sys.stderr)
        return 2
    out = session_folder(args.out, "chat")
    from edge.backends.locate import ModelMissing
    from edge.graph.supervisor import SupervisorSettings
    from edge.session import SessionConfig, run_session

    requests = generate(args.requests, args.seed)
    if args.rescore:
        return report(requests, out, [i * args.slot_s + LEAD_S for i in range(len(requests))], 1.0)
    try:
        starts = make_input(out / "requests.wav", requests, args.slot_s)
    except ModelMissing as exc:
        print(f"venus-edge bench chat: {exc}", file=sys.stderr)
        return 2
    extra = model_extra(args)
    cfg = SessionConfig(mic=str(out / "requests.wav"), speaker=str(out / "replies.wav"), speaker_rate=24000,
                        journal=str(out / "session.journal"), realtime=args.realtime, frontend="default",
                        voice="piper", threads=args.threads, extra=extra)
    print(f"bench chat: {len(requests)} spoken requests (seed {args.seed}) in {len(set(r.voice for r in requests))} "
          f"voices, one every {args.slot_s:.0f} s, decision model "
          f"{args.llm_gguf.name if args.llm_gguf else 'the packaged one'}; files in {out}", flush=True)
    ran = run_session(cfg, settings=SupervisorSettings(hang_s=60.0))
    if not ran.ok:
        print(f"venus-edge bench chat: the session did not complete: {ran.reason}", file=sys.stderr)
        return 1
    return report(requests, out, starts, cfg.chunk_ms / 1000)


def report(requests: list[Request], out: Path, starts: list[float], chunk_s: float) -> int:
    """Each request's verdict, then the last line."""
    results: list[Scored] = []
    for i, (r, (heard, said, delegated)) in enumerate(zip(requests, slots(out / "session.journal", starts,
                                                                            chunk_s)), 1):
        s = score(said, delegated)
        results.append(s)
        verdict = "good" if s.good else ", ".join(
            w for w, bad in (("delegated", not s.local), (f"short ({s.words} words)", s.words < MIN_WORDS),
                             ("refused", s.refused)) if bad)
        print(f"{i:2d}. [{r.voice} {r.wpm}] {r.text!r} heard {heard!r} -> {said[:120]!r}"
              f"{'...' if len(said) > 120 else ''}: {verdict}")
    n = len(results)
    good = sum(s.good for s in results)
    print(f"chat {100 * good / n:.1f}% good over {n} requests (local {sum(s.local for s in results)}, "
          f"at length {sum(s.words >= MIN_WORDS for s in results)}, refusals {sum(s.refused for s in results)}, "
          f"median {statistics.median(s.words for s in results):.0f} words)")
    return 0
