"""`venus-edge bench duplex`: full-duplex behaviour, scored like Full-Duplex-Bench v1.5.

Generates the suite (edge.bench.duplex_suite), streams every case through the
real process graph on the virtual clock (the embedded default, or with
`--bundle DIR` a Venus bundle's frontend and voice), writes each time-aligned reply
WAV, and scores it from VAD segments (edge.bench.duplex_score). Every case runs
twice: with a clean microphone, and with a simulated room that feeds the
assistant's own output back into the microphone (echo cancellation on in
both). Self-interruptions are interruptions whose speech onset lies in no
speech of the input (only the assistant's own echo was there).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

import soundfile as sf

from edge import messages as m
from edge.capture.room import RoomSettings
from edge.bench.duplex_score import (ASSISTANT_GAP_S, USER_GAP_S, CaseScore, Segment, event_segment, score_case,
                               segments, summarize)
from edge.bench.duplex_suite import CATEGORIES, HOUSEHOLD_PARTS, MAX_VOICES, SUITE_VOICES, VOICES, Case, build_suite
from edge.graph.supervisor import SupervisorSettings
from edge.detect.asr import MODELS as ASR_MODELS
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

CONDITIONS = {"clean": None, "echo": RoomSettings()}


def journal_facts(path: Path) -> tuple[list[float], dict]:
    """Speech onsets (s) of every interruption, and the frontend's cost, from a session journal."""
    onsets, compute, audio, decided = [], 0, 0, []
    for _, msg in Journal(path).messages(m.ChunkDecision):
        compute += msg.compute_ns
        audio += 1
        bi = msg.info.get("barge_in") or {}
        if bi.get("decision") and bi.get("decision") != "pending":
            decided.append(bi.get("decision"))
        if msg.interrupt:
            onsets.append((bi.get("onset_ns") or 0) / 1e9)
    return onsets, {"compute_s": compute / 1e9, "chunks": audio, "decisions": decided}


def self_interruptions(onsets: list[float], speech: list[Segment], slack_s: float = 0.3) -> int:
    return sum(not any(s.start - slack_s <= t <= s.end + slack_s for s in speech) for t in onsets)


def run_case(case: Case, condition: str, out: Path, chunk_ms: int, threads: int,
             asr: str = "tiny.en", bundle: Path | None = None) -> tuple[CaseScore, dict]:
    """One case through the graph: the embedded default, or a Venus bundle's frontend and voice."""
    tag = f"{case.name}-{condition}"
    frontend, voice = (f"bundle:{bundle}", f"bundle:{bundle}") if bundle else ("default", "piper")
    cfg = SessionConfig(mic=case.wav, speaker=str(out / f"{tag}.reply.wav"), journal=str(out / f"{tag}.journal"),
                        chunk_ms=chunk_ms, realtime=False, frontend=frontend, voice=voice, threads=threads,
                        echo_cancel=True, room_echo=asdict(CONDITIONS[condition]) if CONDITIONS[condition] else None,
                        extra={} if bundle else {"asr": asr})
    t0 = time.monotonic()
    # On the virtual clock a slow step only delays the run; never mistake it for a hang on a busy machine.
    report = run_session(cfg, settings=SupervisorSettings(hang_s=900.0, handshake_timeout_s=600.0))
    if not report.ok:
        raise RuntimeError(f"{tag}: the session did not complete: {report.reason}")
    reply, rate = sf.read(cfg.speaker, dtype="float32")
    user, urate = sf.read(case.user_wav, dtype="float32")
    mic, mrate = sf.read(case.wav, dtype="float32")
    assistant = segments(reply, rate, ASSISTANT_GAP_S)
    event = event_segment(segments(user, urate, USER_GAP_S), case.event_start_s, case.event_end_s)
    if case.category == "background":  # the user track has no event: take the schedule
        event = Segment(case.event_start_s, case.event_end_s)
    score = score_case(case.category, assistant, event)
    onsets, facts = journal_facts(Path(cfg.journal))
    score.self_interruptions = self_interruptions(onsets, segments(mic, mrate, USER_GAP_S))
    facts.update(case=case.name, condition=condition, wall_s=round(time.monotonic() - t0, 1),
                 reply_s=round(len(reply) / rate, 2), input_s=round(case.duration_s, 2),
                 assistant=[(round(s.start, 2), round(s.end, 2)) for s in assistant],
                 event=(round(event.start, 2), round(event.end, 2)), score=asdict(score),
                 capture=report.node_stats.get("capture", {}))
    return score, facts


def pct(x: float) -> str:
    return f"{100 * x:.0f}"


def table(title: str, scores: list[CaseScore]) -> str:
    s = summarize(scores)
    lines = [f"{title}", f"{'category':<13}{'cases':>6}{'talking':>9}{'rate':>8}   measure"]
    for cat in CATEGORIES:
        if cat not in s.counts:
            continue
        rate = s.interruption_response if cat == "interruption" else s.continuation[cat]
        measure = "responded" if cat == "interruption" else "continued"
        lines.append(f"{cat:<13}{s.counts[cat]:>6}{s.talking[cat]:>9}{pct(rate) + '%':>8}   {measure}")
    fmt = lambda v: "-" if v is None else f"{v:.0f} ms"  # noqa: E731
    lines.append(f"stop latency (median) {fmt(s.stop_ms)}; response latency (median) {fmt(s.response_ms)}; "
                 f"self-interruptions {s.self_interruptions}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench duplex", description=__doc__.split("\n\n")[0])
    dev, held, hum = HOUSEHOLD_PARTS["development"], HOUSEHOLD_PARTS["held-out"], HOUSEHOLD_PARTS["murmurs"]
    p.add_argument("--voices", type=int, default=SUITE_VOICES,
                   help=f"voices in the suite, 1-{MAX_VOICES} (default {SUITE_VOICES}: {len(VOICES)} with 4 cases each, "
                        f"then {SUITE_VOICES - len(VOICES)} with a second person and a television in the room, 3 each; "
                        f"voices {dev[0] + 1}-{dev[1]} are a development part and {held[0] + 1}-{held[1]} a held-out "
                        f"part, each the user talking to someone else, a second person calling someone and a "
                        f"television louder than the user: --voices {held[1]} --skip-voices {held[0]}; "
                        f"voices {hum[0] + 1}-{hum[1]} "
                        f"a held-out part of hummed backchannels, news 12 dB under the user and new questions: "
                        f"--voices {hum[1]} --skip-voices {hum[0]})")
    p.add_argument("--skip-voices", type=int, default=0, help="leave out the first N voices (default 0)")
    p.add_argument("--chunk-ms", type=int, default=1000, help="chunk length (default 1000)")
    p.add_argument("--conditions", default="clean,echo", help="clean, echo or both (default clean,echo)")
    p.add_argument("--categories", default=",".join(CATEGORIES), help="which overlap events to run")
    p.add_argument("--threads", type=int, default=1, help="model threads (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="sessions run at once (default 1; results are the same)")
    p.add_argument("--asr", choices=ASR_MODELS, default="tiny.en",
                   help="the frontend's speech recognizer (default tiny.en)")
    p.add_argument("--bundle", type=Path, help="run a Venus bundle (its frontend and voice) instead of the "
                                                "embedded default")
    p.add_argument("--out", help="keep inputs, replies, journals and results.json here")
    args = p.parse_args(argv)
    if args.bundle is not None and not (args.bundle / "manifest.json").is_file():
        print(f"venus-edge bench duplex: {args.bundle} is not a bundle (no manifest.json); give the folder "
              "venus-export build wrote.", file=sys.stderr)
        return 2
    conditions = [c for c in args.conditions.split(",") if c]
    cats = [c for c in args.categories.split(",") if c]
    bad = [c for c in conditions if c not in CONDITIONS] + [c for c in cats if c not in CATEGORIES]
    if bad:
        print(f"venus-edge bench duplex: unknown condition or category {bad}; conditions are "
              f"{', '.join(CONDITIONS)} and categories {', '.join(CATEGORIES)}.", file=sys.stderr)
        return 2
    if args.chunk_ms < 100 or args.chunk_ms % 10:
        print("venus-edge bench duplex: --chunk-ms must be a multiple of 10 and at least 100.", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="venus-edge-duplex-"))
    try:
        cases = [c for c in build_suite(out / "suite", args.voices, skip=args.skip_voices) if c.category in cats]
    except (ValueError, RuntimeError) as exc:
        print(f"venus-edge bench duplex: {exc}", file=sys.stderr)
        return 2
    results: dict[str, list[CaseScore]] = {c: [] for c in conditions}
    facts = []
    runs = [(case, cond) for cond in conditions for case in cases]
    # Sessions run on the virtual clock, so running several at once changes their wall time only.
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    jobs = [pool.submit(run_case, case, cond, out, args.chunk_ms, args.threads, args.asr, args.bundle)
            for case, cond in runs] if pool else []
    for i, (case, cond) in enumerate(runs):
        score, f = jobs[i].result() if pool else run_case(case, cond, out, args.chunk_ms, args.threads, args.asr,
                                                          args.bundle)
        results[cond].append(score)
        facts.append(f)
        print(f"{case.name:<40}{cond:<7}talking={score.talking!s:<6}stopped={score.stopped!s:<6}"
              f"responded={score.responded!s:<6}stop={score.stop_latency_s} self={score.self_interruptions} "
              f"decisions={f['decisions']} wall={f['wall_s']}s", flush=True)
    if pool is not None:
        pool.shutdown()
    (out / "results.json").write_text(json.dumps(facts, indent=1, default=str))
    who = f"bundle {args.bundle.name}" if args.bundle else f"asr {args.asr}"
    for cond in conditions:
        print()
        print(table(f"{cond} ({'room echo, cancelled' if CONDITIONS[cond] else 'no echo'}), chunk {args.chunk_ms} "
                    f"ms, {who}", results[cond]))
    rtf = [f["compute_s"] / f["input_s"] for f in facts if f["input_s"]]
    print(f"\nfrontend compute per second of audio (median over sessions): {statistics.median(rtf):.2f} s; "
          f"results in {out}")
    every = summarize([s for c in conditions for s in results[c]])
    cont = lambda c: pct(every.continuation.get(c, 0.0))  # noqa: E731
    stop = "-" if every.stop_ms is None else f"{every.stop_ms:.0f}"
    print(f"interruption {pct(every.interruption_response)}% backchannel {cont('backchannel')}% other "
          f"{cont('other')}% background {cont('background')}% self-interruptions {every.self_interruptions} "
          f"stop {stop} ms")
    return 0
