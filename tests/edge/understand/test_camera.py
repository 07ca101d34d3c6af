"""Camera questions answered from measurements of a generated frame, never by a model's guess."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from edge.harness.capability import RunContext
from edge.harness.evidence import Evidence
from edge.language.camera_question import camera_question
from edge.understand.camera import CameraCapability, answer
from edge.understand.scene import Scene, clean_line, colour_names


def _sign(lines: list[str], bg=(250, 250, 250), fg=(10, 10, 10)) -> np.ndarray:
    img = Image.new("RGB", (640, 480), bg)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=64)
    for i, line in enumerate(lines):
        draw.text((60, 120 + 110 * i), line, fill=fg, font=font)
    return np.asarray(img)


def _ask(cap: CameraCapability, question: str, frame: np.ndarray | None) -> str:
    import threading
    ev = Evidence(0, np.zeros(0, np.float32), 0, [(0, frame)] if frame is not None else [])
    ctx = RunContext("w1", question, 1, threading.Event(), lambda s: True, lambda: ev)
    assert cap.claim(question) is not None, question
    return cap.run({"question": question}, ctx).text


def test_scene_questions_are_recognised_and_others_are_not():
    for q, kind in [("What can you see on the camera?", "see"), ("What does the sign say?", "read"),
                    ("Is anyone behind me?", "people"), ("What colour is the wall?", "colour"),
                    ("What can you see right now?", "see")]:
        assert camera_question(q) == kind, q
    for q in ["What is the capital of France?", "Tell me a joke.", "What time is it?", "What color is the sky?",
              "What colour is a ripe banana?"]:  # colours that are facts, not the camera's
        assert camera_question(q) is None, q


def test_ocr_junk_is_dropped_not_read_aloud():
    assert clean_line("¥★★") == ""
    assert clean_line("PHARMACY") == "PHARMACY"


def test_one_face_is_never_said_as_no_one():
    scene = Scene(lines=["PHARMACY"], faces=["on the left"], light="well lit", colours=["white"])
    said = answer("people", scene)
    assert "one person" in said and "no one" not in said.lower()
    plain = answer("see", Scene(lines=["OPEN"], faces_known=True, light="bright"))
    assert "OPEN" in plain and "nothing to see" not in plain


def test_the_sign_is_read_from_the_frame_not_made_up():
    pytest.importorskip("rapidocr_onnxruntime")
    said = _ask(CameraCapability(), "What does the sign say?", _sign(["PHARMACY", "OPEN 9 TO 5"]))
    assert "PHARMACY" in said.upper() and "good morning" not in said.lower(), said


def test_what_the_camera_sees_names_the_text_and_the_colours():
    pytest.importorskip("rapidocr_onnxruntime")
    said = _ask(CameraCapability(), "What can you see right now?", _sign(["EXIT"], bg=(20, 60, 200), fg=(255, 255, 255)))
    assert "EXIT" in said and "blue" in said and "phone" not in said, said


def test_no_frame_is_said_plainly():
    assert _ask(CameraCapability(), "What can you see?", None).startswith("I can't see anything")


def test_a_red_frame_is_red():
    assert colour_names(np.full((120, 160, 3), (200, 20, 20), np.uint8))[0] == "red"
