"""`venus-edge bench camera`: how fast a camera session's journal grows, raw frames against the defaults.

The input is the memory bench's generated room (edge/bench/memory_video.py: textured walls, printed words,
visitors, shake, light changes and sensor noise), scaled to a 1280x720 camera, one frame a second, with a
quiet room for audio. The same input runs twice on the virtual clock through the whole graph (a scripted
frontend, no voice): once with raw rgb24 frames as captured (`--frame-quality 0 --frame-side 0`, how every
session journaled before), once at the default settings. Each run's journal is weighed and scaled to an hour.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import cv2
import numpy as np
import soundfile as sf

from edge.bench.memory_video import Video
from edge.session import SessionConfig, run_session

CAMERA = (1280, 720)


def make_input(work: Path, seconds: int) -> tuple[Path, Path]:
    video = Video(seconds, seed=3, scene_s=(8, 15))
    frames = work / "camera"
    frames.mkdir()
    for t in range(seconds):
        big = cv2.resize(video.frame(t), CAMERA, interpolation=cv2.INTER_CUBIC)
        cv2.imwrite(str(frames / f"{t:06d}.png"), big)  # lossless: the camera's frame as it was
    wav = work / "in.wav"
    sf.write(wav, np.zeros(16000 * seconds, np.float32), 16000, subtype="PCM_16")
    return frames, wav


def journal_mb_per_hour(work: Path, name: str, frames: Path, wav: Path, seconds: int, **frame: int) -> float:
    script = work / "script.txt"
    script.write_text("")
    journal = work / f"{name}.journal"
    cfg = SessionConfig(mic=str(wav), camera=str(frames), speaker="null", journal=str(journal),
                        frontend=f"scripted:{script}", voice="null", realtime=False, answer_wait_s=0.0, **frame)
    report = run_session(cfg, inprocess=True)
    if not report.ok:
        raise RuntimeError(f"the {name} session did not complete: {report.reason}")
    return journal.stat().st_size / 1e6 * 3600 / seconds


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench camera", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=int, default=30, help="session length (default 30)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="venus-edge-bench-camera-") as tmp:
        work = Path(tmp)
        frames, wav = make_input(work, args.seconds)
        raw = journal_mb_per_hour(work, "raw", frames, wav, args.seconds, frame_side=0, frame_quality=0)
        now = journal_mb_per_hour(work, "default", frames, wav, args.seconds)
    print(f"camera journal: raw 1280x720 rgb24 {raw:.0f} MB/hour, default settings {now:.0f} MB/hour "
          f"({raw / now:.1f}x smaller; goal 200 MB/hour)")
    return 0 if now <= 200 else 1
