"""Faces in the scene description: MediaPipe's face detector on a photograph that ships in a package.

The photograph is matplotlib's sample Grace Hopper portrait (one face); two copies side by side make a
frame with someone behind the user.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from edge.memory.describe import SceneDescriber, fields, in_words

pytest.importorskip("mediapipe")
pytest.importorskip("rapidocr_onnxruntime")


@pytest.fixture(scope="module")
def portrait() -> np.ndarray:
    import matplotlib
    path = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    if not path.is_file():
        pytest.skip(f"matplotlib's sample photograph is not installed ({path})")
    return cv2.imread(str(path), cv2.IMREAD_COLOR)


@pytest.fixture(scope="module")
def describer() -> SceneDescriber:
    d = SceneDescriber()
    assert d.faces is not None, "mediapipe is installed but the face counter did not load"
    return d


def test_faces_are_counted_and_text_is_read_in_one_description(portrait, describer):
    room = np.full((480, 1100, 3), 230, np.uint8)
    for x in (20, 560):  # two people side by side
        room[0:480, x:x + 512] = portrait[60:540]
    assert fields(describer(room))["faces"] == "2"
    sign = room.copy()
    cv2.rectangle(sign, (300, 380), (800, 470), (250, 250, 250), -1)
    cv2.putText(sign, "EXIT", (420, 450), cv2.FONT_HERSHEY_SIMPLEX, 2.5, (10, 10, 10), 8, cv2.LINE_AA)
    said = describer(sign)
    assert "EXIT" in fields(said)["text"] and fields(said)["faces"] in ("1", "2"), said  # the sign may hide a chin
    assert in_words(describer(portrait)).endswith("one face")


def test_an_empty_room_has_no_face_and_says_nothing(describer):
    blank = np.full((360, 640, 3), 200, np.uint8)
    assert describer(blank) == "faces: 0" and in_words("faces: 0") == ""
