"""A session with the vision node: the harness finds its archive by itself, and describes frozen frames with it.

The settings come from the session's own builders (what `venus-edge --camera` runs), as each node's process
receives them; the archive is written by edge/memory's Recorder (what the vision node runs); frames are drawn
with OpenCV and read by PP-OCRv4.
"""
from __future__ import annotations

import re
import threading

import cv2
import numpy as np
import pytest

from edge.clock import VirtualClock
from edge.graph.endpoints import remove_runtime_dir
from edge.graph.plain import from_plain
from edge.harness import states as S
from edge.harness.assemble import build_harness, build_registry, with_vision
from edge.harness.capability import RunContext
from edge.harness.settings import HarnessSettings
from edge.memory.archive import Archive
from edge.memory.recorder import Recorder
from edge.memory.settings import MemorySettings
from edge.session import SessionConfig, make_supervisor, nodes_for
from edge.settings import HarnessNodeSettings, VisionSettings
from harness_helpers import Emitted, advance

pytest.importorskip("rapidocr_onnxruntime")


def card(word: str | None) -> np.ndarray:
    """A whiteboard (BGR), with `word` written large when given."""
    img = np.full((480, 640, 3), 250, np.uint8)
    if word:
        cv2.putText(img, word, (60, 260), cv2.FONT_HERSHEY_SIMPLEX, 3.0, (20, 20, 20), 10, cv2.LINE_AA)
    return img


def session_settings(cfg: SessionConfig) -> tuple[HarnessNodeSettings, VisionSettings]:
    """The harness's and the vision node's settings, as their processes receive them."""
    sup = make_supervisor(cfg, nodes_for(cfg))
    try:
        return (from_plain(HarnessNodeSettings, sup.configs["harness"]),
                from_plain(VisionSettings, sup.configs["vision"]))
    finally:
        sup.ctx.destroy(linger=0)
        remove_runtime_dir(sup.ep)


@pytest.mark.parametrize("journal", [True, False], ids=["beside-the-journal", "temporary-folder"])
def test_the_memory_capability_reads_the_archive_the_vision_node_writes(tmp_path, journal):
    from edge.memory.describe import TextReader

    cfg = SessionConfig(mic="in.wav", camera="board.mp4", journal=str(tmp_path / "s.journal") if journal else None)
    harness, vision = session_settings(cfg)
    assert harness.memory_dir == vision.memory_dir
    # What the vision node does with the frames it is sent.
    rec = Recorder(Archive(MemorySettings(root=vision.memory_dir, budget_mb=vision.memory_mb)), describe=TextReader())
    for t, word in enumerate([None] * 3 + ["LADDER"] * 6 + [None] * 3):
        rec.frame(float(t * 10), card(word))
    # What the harness node builds from its settings, with no memory path written anywhere by hand.
    hcfg = with_vision(dict(harness.harness), harness.memory_dir)
    registry, problems, _ = build_registry(hcfg, HarnessSettings.from_dict(hcfg))
    assert not problems and registry.get("memory") is not None
    question = "When was the ladder shown?"
    text = registry.get("memory").run({"question": question},
                                      RunContext("w1", question, 1, threading.Event(), lambda s: True)).text
    assert "LADDER" in text.upper() and re.search(r"\bAt 0:[3-8]0\b", text), text  # shown from 0:30 to 1:20


def test_a_session_without_the_vision_node_has_no_memory_and_a_named_archive_wins():
    harness, = (from_plain(HarnessNodeSettings, make_supervisor(SessionConfig(mic="in.wav"), nodes_for(
        SessionConfig(mic="in.wav"))).configs["harness"]),)
    assert harness.memory_dir is None and with_vision({}, harness.memory_dir) == {}
    # With the vision node: its archive, and frozen frames described, with nothing written by hand.
    assert with_vision({}, "/session") == {"memory": "/session", "multimodal": {"describer": "embedded"}}
    assert with_vision({"memory": "/elsewhere"}, "/session")["memory"] == "/elsewhere"


def test_multimodal_reads_the_text_in_the_frozen_frames_and_only_those(tmp_path):
    """With the vision node on, the multimodal capability describes the frames frozen before the question."""
    clock, emit = VirtualClock(), Emitted()
    cfg = with_vision({"multimodal": {"transcriber": "embedded"}, "router": {"scripted": {"rules": [
        {"match": "(.*)", "capability": "multimodal", "arguments": {"question": "{1}"}}]}}}, str(tmp_path / "mem"))
    assert cfg["multimodal"]["describer"] == "embedded"
    cfg["multimodal"] = {"describer": "embedded"}  # no transcriber: frames alone are enough
    built = build_harness(cfg, tmp_path / "s", clock, emit)
    assert not built.problems, built.problems
    h = built.harness
    for k in range(6):
        h.on_audio(k * 10**9, np.zeros(16000, np.float32))
        h.on_frame(k * 10**9, card("FERRY" if k >= 2 else None)[:, :, ::-1].copy())  # frames arrive as RGB
    cutoff = 6 * 10**9
    h.accept("w", "what does the board say?", cutoff, 6)
    h.on_frame(cutoff + 10**8, card("TRUMPET")[:, :, ::-1].copy())  # after the question: never looked at
    advance(h, clock, 1)
    item = h.store.get("w")
    for _ in range(100):
        if item.state in (S.COMPLETED, S.FAILED):
            break
        advance(h, clock, 0.5)
        item = h.store.get("w")
    assert item.state == S.COMPLETED, item.reason
    assert "FERRY" in item.result.upper() and "TRUMPET" not in item.result.upper(), item.result
    built.close()
