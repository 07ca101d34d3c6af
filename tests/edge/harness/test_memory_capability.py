"""The harness's memory capability answers from the archive the vision node's parts really write.

Frames are drawn with OpenCV, gated, read by PP-OCR and archived by edge/memory's Recorder (what the
vision node runs); the capability is registered from a harness config, as a session builds it.
"""
from __future__ import annotations

import threading

import cv2
import numpy as np
import pytest

from edge.harness.assemble import build_registry
from edge.harness.capability import RunContext
from edge.harness.settings import HarnessSettings
from edge.memory.archive import Archive
from edge.memory.describe import TextReader
from edge.memory.recorder import Recorder
from edge.memory.settings import MemorySettings


def board(word: str | None) -> np.ndarray:
    img = np.full((480, 640, 3), 250, np.uint8)
    if word:
        cv2.putText(img, word, (60, 260), cv2.FONT_HERSHEY_SIMPLEX, 3.0, (20, 20, 20), 10, cv2.LINE_AA)
    return img


def ask(cfg: dict, question: str) -> str:
    registry, problems, _ = build_registry(cfg, HarnessSettings.from_dict(cfg))
    assert not problems
    cap = registry.get("memory")
    registry.validate("memory", {"question": question})
    ctx = RunContext("w1", question, 1, threading.Event(), lambda s: True)
    return cap.run({"question": question}, ctx).text


@pytest.fixture(scope="module")
def archive_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("memory")
    rec = Recorder(Archive(MemorySettings(root=root)), describe=TextReader())
    scenes = [None] * 5 + ["BUDGET"] * 10 + [None] * 5 + ["KEYS"] * 10 + [None] * 10
    for t, word in enumerate(scenes):
        rec.frame(float(t * 10), board(word))
    return root


def test_memory_answers_with_the_word_and_when_it_was_seen(archive_dir):
    text = ask({"memory": str(archive_dir)}, "When did you see the word budget?")
    assert "BUDGET" in text.upper() and "0:50" in text, text


def test_a_question_without_a_seen_word_gets_the_newest_text(archive_dir):
    text = ask({"memory": str(archive_dir)}, "What was written on the whiteboard earlier?")
    assert "KEYS" in text.upper(), text


def test_an_empty_memory_says_so_and_a_bad_setting_is_one_sentence(tmp_path):
    assert ask({"memory": str(tmp_path / "none")}, "What did the sign say?") == "My memory is empty."
    with pytest.raises(ValueError) as err:  # the settings check refuses it before anything is built
        HarnessSettings.from_dict({"memory": 3})
    assert str(err.value) == ("the harness setting memory is 3; it must be a string (the vision node's memory "
                              "archive folder)")
