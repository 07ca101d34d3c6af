"""`venus-export bench tiny`: the trained tiny model, exported and run as a user runs it, on held-out sessions.

Per variant: the trained checkpoint (from the cache, or trained now), a
bundle from `venus-export build`, then held-out sessions (voices, rates,
question orders and frame sizes training never saw) written as a microphone
WAV (and a folder of camera frames for Omni) and run through `venus-edge
--bundle` in real time. What the runtime decided per chunk is read
back from each session's journal and scored against the session's plan.
The barge-in judge is off by default, so every yield measured is the model's own; `--judge on` lets it force
a yield as a live session's does. `--chunk-ms` runs the runtime at shorter chunks: the decisions of the chunks
within one second are merged (spoken if any spoke) and scored against that second of the plan.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import soundfile as sf
from tqdm import tqdm

from export.errors import ExportError
from export.train import script
from export.train.cache import trained_checkpoint
from export.train.loop import TrainSettings, phrases
from export.train.score import Decision, Score, score_session
from export.train.session import Mix, Session, make_session
from export.train.voices import HELDOUT_VOICES, RATE, ClipBank

# Held-out sessions have more barge-ins and backchannels than training, and more of the questions answered
# aloud (the replies that can be barged in on or acknowledged), so that with DEFAULT_SESSIONS each of those is
# counted often; they leave the harness time to answer a delegation before the user speaks again. A result is
# planned 3 or 4 chunks after its delegation, where the harness's delivery gate releases an instant skill's answer
# (measured in the bench's journals: the holding line is played, then the next idle boundary); planned later, an
# acknowledgement meant for the result's reply fell after it, in silence.
BENCH_MIX = Mix(interrupt=0.5, backchannel=1.0, outside=0.3, ack=0.1, no_result=0.0, speed=0.0, colour=False,
                result_delay=(3, 4))
DEFAULT_SESSIONS = 20
HELDOUT_SEED = 1_000_003


def bundle_for(ckpt: Path, out: Path, types: list[str]) -> Path:
    from export.build import BuildOptions, build

    build(ckpt, out, BuildOptions(types=types, encoders=["fp16"], progress=False, threads=1))
    return out


def write_inputs(session: Session, stem: Path) -> tuple[Path, Path | None]:
    wav = stem.with_suffix(".wav")
    sf.write(str(wav), session.audio, RATE, subtype="PCM_16")
    if session.variant != "omni":
        return wav, None
    import cv2

    frames = stem.parent / f"{stem.name}.frames"
    frames.mkdir(exist_ok=True)
    for k in range(session.n_chunks):
        cv2.imwrite(str(frames / f"{k:04d}.png"), session.frame(k)[:, :, ::-1])  # the camera reads BGR files
    return wav, frames


SKILL = """import json
import pathlib

ANSWERS = json.loads((pathlib.Path(__file__).parent / "answers.json").read_text())


def run(arguments, context):
    return ANSWERS.get(arguments.get("request", "").strip(), "I could not find that.")
"""


def harness_config(root: Path) -> dict:
    """A harness whose one skill answers each fixed delegate instruction with a fixed result."""
    skill = root / "skills" / "lookup"
    skill.mkdir(parents=True, exist_ok=True)
    answers = {q.delegate: script.RESULTS[q.key][0] for q in script.OUTSIDE}
    (skill / "answers.json").write_text(json.dumps(answers, indent=2) + "\n")
    (skill / "skill.py").write_text(SKILL)
    (skill / "skill.json").write_text(json.dumps({
        "name": "lookup", "version": "1", "description": "Answers the outside-knowledge questions from a table.",
        "arguments": {"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]},
        "entry": {"python": "skill.py:run"}}, indent=2) + "\n")
    return {"router": {"scripted": {"rules": [], "default": "lookup"}}, "skills": str(root / "skills")}


def run_session(bundle: Path, wav: Path, frames: Path | None, journal: Path, n_chunks: int,
                venus: dict, harness: dict, pace: float = 1.0, judge: bool = False,
                chunk_ms: int = 1000) -> list[Decision]:
    """One session through the process graph; `pace` > 0 feeds the file that many times faster than real time
    on the wall clock, 0 runs it on the virtual clock (fast, but harness results then arrive after the input
    has ended: capture publishes the whole file at once and the clock jumps to its end).

    The session runs in a child process (edge/bench/bundle_session.py), as `venus-edge` runs it: the build
    never imports the runtime's process graph. What it decided is read back from its journal."""
    from edge import messages as m
    from edge.timeline.journal import Journal

    settings = {"mic": str(wav), "camera": str(frames) if frames else None, "speaker": "null",
                "journal": str(journal), "realtime": pace > 0, "pace": pace or 1.0, "frontend": f"bundle:{bundle}",
                "voice": "null", "threads": 1, "video_fps": 1.0, "echo_cancel": False, "barge_in": judge,
                "chunk_ms": chunk_ms,
                "extra": {"venus": venus, "harness": harness}}
    path = journal.with_name(journal.name + ".settings.json")
    path.write_text(json.dumps(settings, indent=1) + "\n")
    child = subprocess.run([sys.executable, "-m", "edge.bench.bundle_session", str(path)], stderr=subprocess.PIPE,
                           text=True, check=False)
    sys.stderr.write(child.stderr)  # the session's own log lines, as when it ran in this process
    if child.returncode:
        lines = [line for line in child.stderr.splitlines() if line.strip()]
        reason = lines[-1].rstrip(".") if lines else f"its process exited with status {child.returncode}"
        raise ExportError(f"The session on {wav.name} did not complete: {reason}.")
    decisions = [Decision(k) for k in range(n_chunks)]
    per_s = 1000 // chunk_ms  # runtime chunks in one planned second
    results = {msg.id: msg.text for _, msg in Journal(journal).messages(m.BackendResult)}
    for _, msg in Journal(journal).messages(m.ChunkDecision):
        k = msg.index // per_s
        if 0 <= k < n_chunks:
            injected = [results.get(i, "") for i in msg.info.get("injected", [])]
            d = decisions[k]
            spoke = msg.control == "speak" or d.control == "speak"
            decisions[k] = Decision(k, "speak" if spoke else msg.control, (d.text + " " + msg.text).strip()
                                    if d.text and msg.text else d.text or msg.text, d.turn_end or msg.turn_end,
                                    d.delegates, injected=injected[-1] if injected else d.injected)
    for _, msg in Journal(journal).messages(m.DelegateRequest):
        if 0 <= msg.index // per_s < n_chunks:
            decisions[msg.index // per_s].delegates.append(msg.instruction)
    return decisions


def heldout_sessions(variant: str, bank: ClipBank, sessions: int, chunks: int, seed: int = 0) -> list[Session]:
    """The bench's sessions: held-out voices, rates and question orders, with BENCH_MIX's events."""
    return [make_session(variant, bank, HELDOUT_VOICES, chunks, [HELDOUT_SEED, seed, i], heldout=True,
                         mix=BENCH_MIX) for i in range(sessions)]


def bench_variant(variant: str, sessions: int, chunks: int, workdir: Path, seed: int = 0,
                  types: tuple[str, ...] = ("F16",), progress: bool = True, pace: float = 1.0, judge: bool = False,
                  chunk_ms: int = 1000) -> dict[str, Score]:
    settings = TrainSettings(variant, seed=seed)
    t0 = time.monotonic()
    ckpt = trained_checkpoint(settings, progress)
    record = json.loads((ckpt / "train.json").read_text())
    print(f"{variant}: checkpoint {ckpt} (trained in {record['seconds']:.0f} s; "
          f"ready in {time.monotonic() - t0:.0f} s)")
    out = workdir / variant
    out.mkdir(parents=True, exist_ok=True)
    bundle = bundle_for(ckpt, out / "bundle", list(types))  # in the run's folder: runs side by side never share one
    bank = ClipBank.load_or_make(phrases(variant), HELDOUT_VOICES, ckpt.parent.parent, progress)
    chunks = min(chunks, settings.resolved().chunks)  # positions past the trained length were never seen
    plans = heldout_sessions(variant, bank, sessions, chunks, seed)
    harness = harness_config(out / "harness")
    scores: dict[str, Score] = {}
    for precision in types:
        total = Score()
        for i, session in enumerate(tqdm(plans, desc=f"{variant} {precision} sessions", disable=not progress)):
            wav, frames = write_inputs(session, out / f"session-{i:02d}")
            decisions = run_session(bundle, wav, frames, out / f"session-{i:02d}-{precision}.journal",
                                    session.n_chunks, {"precision": precision}, harness, pace, judge, chunk_ms)
            total.merge(score_session(session, decisions))
        scores[precision] = total
    return scores


def run_bench(variants: list[str], sessions: int, chunks: int, workdir: Path | None, seed: int = 0,
              types: tuple[str, ...] = ("F16",), progress: bool = True, pace: float = 1.0, judge: bool = False,
              chunk_ms: int = 1000) -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = workdir or Path(tmp)
        lines = []
        for variant in variants:
            scores = bench_variant(variant, sessions, chunks, root, seed, types, progress, pace, judge, chunk_ms)
            for precision, sc in scores.items():
                print(f"{variant} {precision}: {sc.detail()}")
                if precision != types[0]:  # the first type's line comes last, as the bench's result
                    print(sc.line(variant, precision))
            setup = f" [judge {'on' if judge else 'off'}, {chunk_ms} ms chunks]"
            lines.append(scores[types[0]].line(variant) + setup)
        for line in lines:
            print(line)
    return 0
