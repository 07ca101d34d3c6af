"""Long-video memory on a generated hour: what the gate keeps, what it costs, and whether questions find it.

The video (edge/bench/memory_video.py) runs at 1 fps through the gate; kept frames are archived
with their audio and their descriptors; then questions about what was on screen when are
retrieved (top 5, near repeats discounted) and answered.
- The embedded default (no --bundle): the descriptor is the text PP-OCRv4 reads in the frame;
  retrieval is a text match over those descriptions; the answer quotes the best pick.
- An Omni bundle (--bundle DIR): the descriptor is the frame's vision tokens (the bundle's vision
  encoder and resampler, one view, 64 tokens); retrieval is late-interaction MaxSim between the
  question's token embeddings and each frame's tokens, MAD-weighted, with the novelty penalty;
  the answer is the bundle's LLM decoding greedily after the picks (frames and their audio, in
  time order) and the question. Both depend on trained weights: on a random-weight tiny bundle
  they measure the pipeline's cost, and recall sits near the chance line printed beside it.
  What a bundle's descriptors and MaxSim do hold without training is printed apart: "by picture"
  asks each question with the vision tokens of a fresh view of the scene (another second, other
  noise) in place of the question's words.
Recall@5 counts a question found when a pick lies in the scene asked about; chance is the same
count with random relevance, same selection, measured in the same run. Times are CPU seconds
of this process (one core). The gate's NumPy reference runs on a sample of the same frames as
the baseline for the kernel's speed.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from edge.bench.memory_video import Video, questions
from edge.memory.answer import answer
from edge.memory.archive import Archive
from edge.memory.retrieve import description_similarity, maxsim_scores, select, text_scores, token_similarity
from edge.memory.settings import MemorySettings
from kernels.block_match import backend, match_reference
from kernels.gate import Gate


def run(minutes: float, seed: int, scene_s: tuple[int, int], root: Path, budget_mb: float,
        baseline_frames: int, bundle: Path | None = None, out: TextIO | None = None) -> dict:
    out = out or sys.stdout  # looked up per call: a caller may have replaced sys.stdout since import
    seconds = int(minutes * 60)
    video = Video(seconds, seed, scene_s)
    reader, tokens = None, None
    try:
        if bundle is None:
            from edge.memory.describe import TextReader
            reader = TextReader()
        else:
            from edge.frontend.venus.memory import BundleMemory
            tokens = BundleMemory(bundle)
    except ValueError as e:
        raise SystemExit(f"venus-edge bench memory: {e}")
    describe_s = 0.0
    archive = Archive(MemorySettings(root, budget_mb=budget_mb, keep_s=0))
    gate = Gate()
    gate_s, kinds, frames = [], [], []
    keep_every = max(1, seconds // max(1, baseline_frames))
    for t in range(seconds):
        frame = video.frame(t)
        start = time.process_time()
        decision = gate.step(frame)
        gate_s.append(time.process_time() - start)
        kinds.append(decision.kind)
        if t % keep_every == 0 and len(frames) < baseline_frames:
            frames.append(frame)
        if decision.kept:
            start = time.process_time()
            if tokens is not None:
                archive.add(float(t), frame, decision.kind, tokens=tokens.frame(frame))
            else:
                archive.add(float(t), frame, decision.kind, reader(frame))
            describe_s += time.process_time() - start
        archive.add_audio(float(t), video.audio(t))
    # The baseline: the same gate with the NumPy reference matcher, on a sample of the frames.
    ref_gate, ref_s = Gate(matcher=match_reference), []
    for f in frames:
        start = time.process_time()
        ref_gate.step(f)
        ref_s.append(time.process_time() - start)

    truth = video.truth
    kept = [k != "drop" for k in kinds]
    static = [i for i, s in enumerate(truth) if s.static]
    changes = [i for i, s in enumerate(truth) if s.new_scene]
    missed = [truth[i].t for i in changes if not kept[i]]
    qs = questions(video, now=float(seconds), margin_s=min(40, scene_s[0] // 3))
    entries = archive.entries()
    if tokens is not None:
        frame_tokens = [archive.tokens(e) for e in entries]
        similar = token_similarity(frame_tokens)
    else:
        similar = description_similarity(entries)
    found = right = chance = by_picture = 0
    rng = np.random.default_rng(seed)
    answer_s = 0.0
    for q, word, scene in qs:
        start = time.process_time()
        if tokens is not None:
            picks = select(entries, maxsim_scores(tokens.query(q), frame_tokens), similar, k=5)
            by_time = sorted(picks, key=lambda p: p.entry.t)
            said = tokens.answer(q, [(archive.tokens(p.entry), archive.audio(p.entry)) for p in by_time])
        else:
            picks = select(entries, text_scores(q, entries, now=float(seconds)), similar, k=5)
            said = answer(q, picks)
        answer_s += time.process_time() - start
        found += any(video.scene_at(int(p.entry.t)) == scene for p in picks)
        lucky = select(entries, rng.random(len(entries)), similar, k=5)
        chance += any(video.scene_at(int(p.entry.t)) == scene for p in lucky)
        if tokens is not None:  # the same scene seen again, as the query
            s = video.scenes[scene]
            probe = tokens.frame(video.frame(s.start + (s.end - s.start) * 2 // 3))
            seen = select(entries, maxsim_scores(probe, frame_tokens), similar, k=5)
            by_picture += any(video.scene_at(int(p.entry.t)) == scene for p in seen)
        right += word.lower() in said.lower()
        if word.lower() not in said.lower() and tokens is None:
            print(f"  wrong: {q} -> {said} (shown: {word})", file=out)
    hours = seconds / 3600
    gate_ms = 1e3 * statistics.mean(gate_s)
    result = {
        "kept": 100 * sum(kept) / seconds, "static_kept": 100 * sum(kept[i] for i in static) / max(1, len(static)),
        "changes": len(changes), "missed": missed, "mb_per_hour": archive.bytes / 1e6 / hours,
        "gate_ms": gate_ms, "gate_p95_ms": 1e3 * float(np.percentile(gate_s, 95)),
        "reference_ms": 1e3 * statistics.mean(ref_s) if ref_s else float("nan"),
        "describe_s": describe_s, "answer_s": answer_s, "chance": 100 * chance / max(1, len(qs)),
        "by_picture": 100 * by_picture / max(1, len(qs)),
        "recall": 100 * found / max(1, len(qs)), "answer": 100 * right / max(1, len(qs)), "questions": len(qs),
    }
    print(f"video: {seconds} s at 1 fps, {len(video.scenes)} scenes, {len(static)} static seconds; "
          f"matcher: {backend()}", file=out)
    print(f"gate: kept {sum(kept)} frames ({result['kept']:.1f}%), {result['static_kept']:.1f}% of static seconds, "
          f"{len(changes) - len(missed)}/{len(changes)} scene changes kept"
          + (f" (missed at {missed})" if missed else ""), file=out)
    print(f"gate: {gate_ms:.2f} ms/frame mean, {result['gate_p95_ms']:.2f} ms p95 (CPU, one core); NumPy reference "
          f"{result['reference_ms']:.1f} ms/frame on {len(ref_s)} of the frames: "
          f"{result['reference_ms'] / gate_ms:.0f}x", file=out)
    described = sum(kept)
    what = "text reader (PP-OCRv4" if tokens is None else f"vision tokens ({bundle.name}'s encoder, 64 per frame"
    print(f"{what}, kept frames only, with storing): {described} frames, "
          f"{1e3 * describe_s / max(1, described):.0f} ms/frame, "
          f"{describe_s:.0f} s in all", file=out)
    how = "text match over descriptions" if tokens is None else "MaxSim of question tokens on vision tokens"
    print(f"retrieval ({how}): recall@5 {result['recall']:.0f}%, chance {result['chance']:.0f}% (random relevance, "
          f"same selection); {1e3 * answer_s / max(1, len(qs)):.0f} ms per question with its answer", file=out)
    if tokens is not None:
        print(f"retrieval by picture (a fresh view of the scene as the query): recall@5 {result['by_picture']:.0f}%",
              file=out)
    print(f"archive: {len(entries)} entries, {archive.bytes / 1e6:.1f} MB ({result['mb_per_hour']:.1f} MB/hour "
          f"with 16 kHz audio around kept frames)", file=out)
    print(f"memory: kept {result['kept']:.0f}% ({result['mb_per_hour']:.0f} MB/hour), gate {gate_ms:.2f} ms/frame, "
          f"recall@5 {result['recall']:.0f}% over {len(qs)} questions, answer {result['answer']:.0f}% "
          f"({'embedded' if tokens is None else 'bundle'})", file=out)
    if tokens is not None:
        tokens.close()
    return result


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=60.0, help="length of the generated video (default 60)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated video (default 0)")
    p.add_argument("--scene-seconds", type=int, nargs=2, default=(60, 240), metavar=("MIN", "MAX"),
                   help="scene length range in seconds (default 60 240)")
    p.add_argument("--budget-mb", type=float, default=512.0, help="the archive's disk budget (default 512)")
    p.add_argument("--baseline-frames", type=int, default=20,
                   help="frames the NumPy reference gate times as the baseline (default 20)")
    p.add_argument("--dir", type=Path, help="keep the archive in this folder (default: a temporary one)")
    p.add_argument("--bundle", type=Path, metavar="DIR",
                   help="an Omni bundle: vision tokens as descriptors, MaxSim retrieval, the bundle's LLM answers "
                        "(default: the embedded default's text reader)")
    a = p.parse_args(argv)
    if a.minutes <= 0 or a.scene_seconds[0] < 5 or a.scene_seconds[1] < a.scene_seconds[0]:
        print("venus-edge bench memory: --minutes must be positive and --scene-seconds MIN >= 5, MAX >= MIN.",
              file=sys.stderr)
        return 2
    if a.dir:
        run(a.minutes, a.seed, tuple(a.scene_seconds), a.dir, a.budget_mb, a.baseline_frames, a.bundle)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run(a.minutes, a.seed, tuple(a.scene_seconds), Path(tmp), a.budget_mb, a.baseline_frames, a.bundle)
    return 0
