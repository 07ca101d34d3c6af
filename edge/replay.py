"""Replay: feed a journal's recorded input back through the graph on the virtual clock, and compare.

The recorded audio chunks become the input (bit-exact), the session's
settings are reused, and `verify` compares what the assistant decided,
said, played and delegated, message by message.

A journal is something people attach to bug reports, so replay never starts
what one names: the recorded harness keeps only its plain settings (limits,
timeouts, the gate, the general-only/embedded/scripted router, the embedded
chat); skills, MCP servers, a transcriber module, a chat URL or model file and
the store folder are left out, and said so. Whoever wants them gives their own
harness file (`venus-edge replay --harness FILE`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.scratch import ScratchDir, sweep
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal, JournalError, content


@dataclass
class ReplayResult:
    ok: bool
    journal: Path | None  # the replay's own journal, kept only when asked for (out_journal)
    compared: int
    first_difference: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)  # what of the recording was not run, one sentence each


NO_GATE_DBFS = -400.0  # below any 16-bit signal: only digital silence (all zeros) counts as quiet
WORK_PREFIX = "venus-edge-replay-"  # the temporary folder of the recorded input and the reply audio


def replayable_harness(recorded: dict) -> tuple[dict, list[str]]:
    """The recorded harness section without anything that starts a process, imports code, opens a file or a
    network address, or chooses where to write; and the names of what was left out."""
    from edge.harness.settings import HarnessSettings
    from edge.harness.specs import NAMED_ROUTERS  # the built-in routers: safe to take from a journal

    keep_plain = {f.name for f in dataclasses.fields(HarnessSettings)}
    out, dropped = {}, []
    for key, value in (recorded or {}).items():
        if key in keep_plain:
            out[key] = value
        elif key == "router" and (value in NAMED_ROUTERS or (isinstance(value, dict) and set(value) == {"scripted"})):
            out[key] = value
        elif key == "chat" and value == "embedded":
            out[key] = value
        elif key == "multimodal" and isinstance(value, dict) and value and set(value.items()) <= {
                ("transcriber", "embedded"), ("describer", "embedded")}:
            out[key] = value
        else:
            dropped.append(key)
    return out, sorted(dropped)


def extract_input(journal: Journal, out_dir: Path) -> tuple[Path, Path | None, bool]:
    """Write the recorded audio (and frames) back out as a WAV (and an image folder); and whether the recording
    summarized quiet chunks (a journal from before capture had a noise gate holds none)."""
    chunks: dict[int, np.ndarray] = {}
    frames: dict[int, tuple[m.VideoFrame, bytes]] = {}
    for rec, msg in journal.messages(m.AudioChunk, m.VideoFrame):
        if isinstance(msg, m.AudioChunk) and msg.silent:
            chunks[msg.index] = np.zeros(msg.n_samples, "<i2")  # summarized silence: zeros, as capture sent it
        elif isinstance(msg, m.AudioChunk) and rec.env.payload:
            chunks[msg.index] = np.frombuffer(rec.env.payload[0], "<i2")
        elif isinstance(msg, m.VideoFrame) and rec.env.payload:
            frames[msg.index] = (msg, rec.env.payload[0])
    if not chunks:
        raise JournalError(f"journal {journal.path} holds no audio chunks to replay")
    gated = any(msg.silent for _, msg in journal.messages(m.AudioChunk))
    audio = np.concatenate([chunks[i] for i in sorted(chunks)])
    wav = out_dir / "input.wav"
    sf.write(str(wav), audio, RATE, subtype="PCM_16")
    if not frames:
        return wav, None, gated
    import cv2

    folder = out_dir / "frames"
    folder.mkdir()
    for i, (msg, data) in sorted(frames.items()):
        if msg.encoding == "jpeg":  # as recorded: capture sends these bytes again unchanged (frame_codec.py)
            (folder / f"{i:06d}.jpg").write_bytes(data)
            continue
        img = np.frombuffer(data, np.uint8).reshape(msg.height, msg.width, 3)
        cv2.imwrite(str(folder / f"{i:06d}.png"), cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
    return wav, folder, gated


def replay(path: str | Path, *, verify: bool = False, out_journal: str | Path | None = None,
           speaker: str | None = None, inprocess: bool = True, harness: dict | None = None) -> ReplayResult:
    """`harness`: the user's own harness section (from --harness FILE); None: the recording's plain settings."""
    original = Journal(path)
    recorded = SessionConfig.from_dict(original.session.get("config", {}))
    notes: list[str] = []
    if harness is None:
        harness, dropped = replayable_harness(recorded.extra.get("harness") or {})
        if dropped:
            notes.append(f"the recorded harness settings {', '.join(dropped)} were not run (a journal never starts "
                         "what it names); give --harness FILE to replay with harness settings of your own.")
    recorded = dataclasses.replace(recorded, extra={**recorded.extra, "harness": harness})
    sweep(WORK_PREFIX)  # what a killed replay left (it holds the recorded input)
    scratch = ScratchDir(WORK_PREFIX)
    try:
        return _replay(original, recorded, scratch.path, notes, verify, out_journal, speaker, inprocess)
    finally:
        scratch.remove()


def _replay(original: Journal, recorded: SessionConfig, work: Path, notes: list[str], verify: bool,
            out_journal: str | Path | None, speaker: str | None, inprocess: bool) -> ReplayResult:
    wav, frames, gated = extract_input(original, work)
    if not gated:  # quiet chunks were recorded as they were heard: no gate, or the replay would differ
        recorded = dataclasses.replace(recorded, extra={**recorded.extra, "quiet_dbfs": NO_GATE_DBFS})
    # The recorded chunks are what capture published: already cleaned of echo. Adding the simulated
    # room again, or cancelling a second time, would change the input the session decided on.
    cfg = dataclasses.replace(recorded, room_echo=None, echo_cancel=False, mic=str(wav),
                              camera=str(frames) if frames else None, speaker=speaker or str(work / "reply.wav"),
                              journal=str(out_journal or work / "replay.journal"), realtime=False, pace=1.0,
                              answer_wait_s=0.0)  # the recorded input holds the quiet room the session waited in
    if frames is not None and any(frames.glob("*.png")):  # raw frames were recorded: sent raw again, unchanged
        cfg = dataclasses.replace(cfg, frame_side=0, frame_quality=0)
    report = run_session(cfg, inprocess=inprocess)
    if not report.ok:
        raise RuntimeError(f"the replayed session did not complete: {report.reason}")
    new = Journal(cfg.journal)  # type: ignore[arg-type]
    kept = new.path if out_journal else None  # the work folder goes when the replay ends
    if not verify:
        return ReplayResult(True, kept, 0, notes=notes)
    # Each stream must match in order; how streams from different nodes interleave depends on timing.
    a, b = content(original), content(new)
    compared = 0
    for kind in sorted({t for t, _ in a} | {t for t, _ in b}):
        xs, ys = [c for t, c in a if t == kind], [c for t, c in b if t == kind]
        for i, (x, y) in enumerate(zip(xs, ys)):
            if x != y:
                return ReplayResult(False, kept, compared, f"{kind} #{i}: recorded {x} but replay gave {y}", notes)
            compared += 1
        if len(xs) != len(ys):
            return ReplayResult(False, kept, compared,
                                f"recorded {len(xs)} {kind} messages but replay gave {len(ys)}", notes)
    return ReplayResult(True, kept, compared, notes=notes)
