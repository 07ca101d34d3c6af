"""The embedded default sees: a sign held to the camera, read by the vision node, answers the spoken question.

Run through the real command line (`venus-edge --camera VIDEO --mic WAV --fast`); the video is made with
OpenCV and the question spoken by espeak-ng. Slow: it loads whisper, Qwen and PP-OCR.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from edge import messages as m
from edge.bench import spoken
from edge.timeline.journal import Journal
from repo_paths import ROOT



def sign_video(path: Path, word: str, seconds: float, fps: int = 5) -> Path:
    """A white card with `word` in big black letters, held still for `seconds`."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (640, 480))
    frame = np.full((480, 640, 3), 255, np.uint8)
    cv2.putText(frame, word, (90, 280), cv2.FONT_HERSHEY_SIMPLEX, 4.0, (0, 0, 0), 12, cv2.LINE_AA)
    for _ in range(int(seconds * fps)):
        writer.write(frame)
    writer.release()
    return path


def run_cli(tmp: Path, camera: Path | None, question: str, total_s: float = 8.0, *extra: str) -> Journal:
    audio, _ = spoken.timeline([(1.0, question)], total_s)
    mic = spoken.write(tmp / "question.wav", audio)
    cmd = [sys.executable, "-m", "edge.cli", "--mic", str(mic), "--speaker", str(tmp / "out.wav"), "--fast",
           "--journal", str(tmp / "s.journal"), *extra] + (["--camera", str(camera)] if camera else [])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return Journal(tmp / "s.journal")


@pytest.mark.slow
def test_the_default_reads_a_sign_held_to_the_camera(tmp_path):
    journal = run_cli(tmp_path, sign_video(tmp_path / "sign.mp4", "PARIS", 8.0), "What does this sign say?")
    scenes = [msg for _, msg in journal.messages(m.SceneDescription)]
    assert scenes and "PARIS" in scenes[0].text.upper(), [s.text for s in scenes[:3]]
    assert sum(s.kept for s in scenes) < len(scenes), "the gate kept every frame of a still card"
    reply = " ".join(msg.text for _, msg in journal.messages(m.ChunkDecision))
    assert "paris" in reply.lower(), f"the reply does not read the sign: {reply!r}"
    assert any((tmp_path / "s.journal.memory").glob("*.jpg")), "no kept frame reached the memory archive"


def portraits_video(path: Path, seconds: float, fps: int = 5) -> Path:
    """Two people in view: matplotlib's sample portrait (Grace Hopper), twice side by side."""
    import matplotlib
    photo = cv2.imread(str(Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"), cv2.IMREAD_COLOR)
    if photo is None:
        pytest.skip("matplotlib's sample photograph is not installed")
    frame = np.full((480, 1100, 3), 230, np.uint8)
    for x in (20, 560):
        frame[:, x:x + 512] = photo[60:540]
    frame = cv2.resize(frame, (880, 384), interpolation=cv2.INTER_AREA)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (880, 384))
    for _ in range(int(seconds * fps)):
        writer.write(frame)
    writer.release()
    return path


@pytest.mark.slow
def test_the_default_sees_someone_behind_the_user(tmp_path):
    pytest.importorskip("mediapipe")
    journal = run_cli(tmp_path, portraits_video(tmp_path / "two.mp4", 8.0), "Is anyone behind me?")
    scenes = [msg for _, msg in journal.messages(m.SceneDescription)]
    # Both faces reach the frontend's context; what the small LLM then says is its own (it tends to delegate).
    assert scenes and "faces: 2" in scenes[0].text, [s.text for s in scenes[:3]]
    assert " ".join(msg.text for _, msg in journal.messages(m.ChunkDecision)).strip(), "no reply"
