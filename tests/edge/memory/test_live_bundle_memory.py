"""A live Omni bundle session keeps long-video memory: kept frames are archived with the bundle's vision tokens,
and a question about an earlier scene is answered by the bundle's model from that archive.

The session runs through the process graph as `venus-edge --bundle DIR --camera FOLDER` runs it (in a child
process, edge/bench/bundle_session.py), on the tiny Omni bundle. The model's delegation is forced (the tiny
weights are random); the scripted router sends it to the memory capability.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import soundfile as sf

from edge import messages as m
from edge.memory.archive import Archive
from edge.memory.settings import MemorySettings
from edge.session import SessionConfig, nodes_for
from edge.timeline.journal import Journal
from repo_paths import ROOT

pytestmark = pytest.mark.slow
ASK = "the red card"


def scenes(folder: Path, seconds: int) -> Path:
    """A red card with a word for the first half, then a blue one with another word."""
    folder.mkdir()
    for k in range(seconds):
        red = k < seconds // 2
        img = np.full((240, 320, 3), (40, 40, 220) if red else (220, 60, 40), np.uint8)
        cv2.putText(img, "APPLE" if red else "TRAIN", (30, 140), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 5)
        cv2.imwrite(str(folder / f"{k:04d}.png"), img)
    return folder


def test_an_omni_bundle_with_a_camera_runs_the_vision_node(omni_bundle, tiny_bundles):
    assert "vision" in nodes_for(SessionConfig(camera="0", frontend=f"bundle:{omni_bundle}"))
    assert "vision" not in nodes_for(SessionConfig(camera="0", frontend=f"bundle:{tiny_bundles['audio']}"))


def test_a_live_omni_session_archives_frames_and_answers_from_them(omni_bundle, tmp_path):
    seconds = 8
    wav = tmp_path / "mic.wav"
    sf.write(str(wav), np.zeros(16000 * seconds, np.int16), 16000, subtype="PCM_16")
    camera = scenes(tmp_path / "frames", seconds)
    journal = tmp_path / "s.journal"
    forced = {"*": ["<|listen|>"], "6": ["<|speak|>", "<delegate>", ASK, "</delegate>",
                                         "<|turn_eos|>", "<|listen|>"]}
    settings = {"mic": str(wav), "camera": str(camera), "speaker": "null", "journal": str(journal),
                "realtime": False, "frontend": f"bundle:{omni_bundle}", "voice": "null", "threads": 1,
                "video_fps": 1.0, "echo_cancel": False, "barge_in": False,
                "venus": {"n_ctx": 1024, "kv_high": 900, "kv_low": 600, "max_speak_tokens": 40, "forced": forced},
                "harness": {"router": {"scripted": {"rules": [{"match": "(.+)", "capability": "memory",
                                                        "arguments": {"question": "{1}"}}], "default": None}}}}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    done = subprocess.run([sys.executable, "-m", "edge.bench.bundle_session", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]

    archive = Archive(MemorySettings(root=Path(f"{journal}.memory"), keep_s=0))
    entries = archive.entries()
    assert entries, "no kept frame reached the memory archive"
    assert all(e.tokens for e in entries), "kept frames were stored without the bundle's vision tokens"
    from edge.frontend.venus.memory import BundleMemory

    reader = BundleMemory(omni_bundle)
    stored = archive.tokens(entries[0]).astype(np.float32)
    red, blue = (reader.frame(cv2.imread(str(camera / f"{k:04d}.png"))) for k in (0, seconds - 1))
    assert stored.shape == red.shape
    # The bus carries frames as JPEG and the archive stores float16: close to the bundle's own tokens of the
    # first frame, closer than to the other scene's.
    assert np.abs(stored - red).mean() < 0.05 < np.abs(stored - blue).mean() or \
        np.abs(stored - red).mean() < np.abs(stored - blue).mean() / 4, "the archive's tokens are not the bundle's"

    asked = [msg for _, msg in Journal(journal).messages(m.DelegateRequest)]
    assert [a.instruction for a in asked] == [ASK]
    results = [msg for _, msg in Journal(journal).messages(m.BackendResult)]
    assert results, "the memory question got no result"
    picks = [(archive.tokens(e), archive.audio(e)) for e in entries]
    expected = reader.answer(ASK, picks) if len(entries) <= 5 else None
    said = results[-1].text
    assert said and "nothing in memory" not in said and "memory is empty" not in said, said
    if expected:  # every kept frame is a pick: the answer is the bundle's own words after all of them
        assert said.rstrip(".") == expected.rstrip(".") or said.startswith("I looked at what I saw"), (said, expected)
    reader.close()
