"""Chunk-loop jitter with the camera on vs off, measured in one run on the same machine.

Two real-time sessions of the embedded default hear the same spoken question; the second also reads a
video of a sign through the vision node. For every chunk decision: how late it left after its chunk's
end (the frontend's publish stamp minus the chunk's end). Printed: p50, p95 and max lateness per
session, the spread (p95 - p50), and the ratio camera-on / camera-off.

    python -m edge.bench.vision_jitter [--seconds 20]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import cv2
import numpy as np

from edge import messages as m
from edge.bench import spoken
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal


def sign_video(path: Path, word: str, seconds: float, fps: int = 5) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (640, 480))
    for i in range(int(seconds * fps)):
        frame = np.full((480, 640, 3), 255, np.uint8)
        if (i // (fps * 4)) % 2 == 0:  # the card comes and goes every 4 s: new scenes to read
            cv2.putText(frame, word, (90, 280), cv2.FONT_HERSHEY_SIMPLEX, 4.0, (0, 0, 0), 12, cv2.LINE_AA)
        writer.write(frame)
    writer.release()
    return path


def lateness_ms(journal: Path, chunk_ms: int) -> np.ndarray:
    late = [(rec.env.t_ns - (msg.index + 1) * chunk_ms * 1_000_000) / 1e6
            for rec, msg in Journal(journal).messages(m.ChunkDecision)]
    return np.array(late[1:])  # the first chunk carries the start-up


def session(d: Path, mic: Path, camera: Path | None, chunk_ms: int) -> np.ndarray:
    name = "on" if camera else "off"
    cfg = SessionConfig(mic=str(mic), camera=str(camera) if camera else None, speaker=str(d / f"{name}.wav"),
                        journal=str(d / f"{name}.journal"), chunk_ms=chunk_ms, realtime=True, frontend="default",
                        voice="espeak")
    report = run_session(cfg)
    if not report.ok:
        raise SystemExit(f"the camera-{name} session failed: {report.reason}")
    return lateness_ms(d / f"{name}.journal", chunk_ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--chunk-ms", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        audio, _ = spoken.timeline([(2.0, "What does this sign say?"), (10.0, "Tell me a short joke.")],
                                   args.seconds)
        mic = spoken.write(d / "mic.wav", audio)
        video = sign_video(d / "sign.mp4", "PARIS", args.seconds)
        off = session(d, mic, None, args.chunk_ms)
        on = session(d, mic, video, args.chunk_ms)
    rows = {}
    for name, late in (("off", off), ("on", on)):
        p50, p95, top = np.percentile(late, 50), np.percentile(late, 95), late.max()
        rows[name] = (p50, p95, top)
        print(f"camera {name:3s}: {len(late)} chunks, late p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {top:.0f} ms, "
              f"spread {p95 - p50:.0f} ms")
    ratio = rows["on"][1] / rows["off"][1] if rows["off"][1] > 0 else float("nan")
    print(f"jitter: camera on/off p95 lateness ratio {ratio:.2f} "
          f"({rows['on'][1]:.0f} vs {rows['off'][1]:.0f} ms, chunk {args.chunk_ms} ms)")


if __name__ == "__main__":
    main()
