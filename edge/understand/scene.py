"""What the device measures in a frame: cleaned text lines, faces and where they are, light, dominant colours.

Measurements only: the camera capability (edge/understand/camera.py) says them in words, and says so where
the device cannot tell. OCR lines below a confidence, or mostly symbols ("¥★★"), are dropped rather than read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

MIN_TEXT_SCORE = 0.75
# Named colours by hue band (degrees), for pixels with enough saturation and light.
_HUES = ((15, "red"), (40, "orange"), (70, "yellow"), (165, "green"), (255, "blue"), (290, "purple"),
         (335, "pink"), (360, "red"))


@dataclass
class Scene:
    lines: list[str] = field(default_factory=list)
    faces: list[str] = field(default_factory=list)  # each face's place: "on the left", "in the middle", ...
    light: str = ""  # dark / dim / well lit / bright
    colours: list[str] = field(default_factory=list)  # the dominant ones, most first
    faces_known: bool = True  # False where no face detector is installed


def clean_line(text: str) -> str:
    """The line's words, symbols dropped; "" when too little of it is letters or digits to be a word."""
    kept = re.sub(r"[^A-Za-z0-9 '&:/.,!?-]+", " ", text)
    kept = re.sub(r"\s+", " ", kept).strip(" .,")
    letters = sum(ch.isalnum() for ch in kept)
    return kept if letters >= 2 and letters >= 0.6 * len(text.replace(" ", "")) else ""


def place(x_centre: float) -> str:
    return "on the left" if x_centre < 0.36 else "on the right" if x_centre > 0.64 else "in the middle"


def light_of(rgb: np.ndarray) -> str:
    mean = float(rgb.mean()) / 255.0
    return "dark" if mean < 0.12 else "dim" if mean < 0.3 else "bright" if mean > 0.8 else "well lit"


def colour_names(rgb: np.ndarray, top: int = 2, min_share: float = 0.12) -> list[str]:
    """The named colours covering the most of the frame (white, black and grey included)."""
    small = rgb[::max(1, rgb.shape[0] // 64), ::max(1, rgb.shape[1] // 64)].reshape(-1, 3).astype(np.float32) / 255
    mx, mn = small.max(1), small.min(1)
    sat = np.where(mx > 0, (mx - mn) / np.maximum(mx, 1e-6), 0)
    r, g, b = small.T
    hue = (np.degrees(np.arctan2(np.sqrt(3) * (g - b), 2 * r - g - b)) + 360) % 360
    names = np.full(len(small), "grey", dtype=object)
    names[mx < 0.2] = "black"
    names[(mx >= 0.8) & (sat < 0.15)] = "white"
    vivid = (sat >= 0.3) & (mx >= 0.2)
    for i in np.flatnonzero(vivid):
        names[i] = next(name for edge, name in _HUES if hue[i] < edge)
    found, counts = np.unique(names.astype(str), return_counts=True)
    order = np.argsort(-counts)
    return [str(found[i]) for i in order[:top] if counts[i] >= min_share * len(small)]


class Measurer:
    """The text reader and the face detector, loaded once; either may be missing (then that part is unknown)."""

    def __init__(self, threads: int = 1) -> None:
        self.reader = self.detector = None
        try:
            from edge.memory.describe import TextReader
            self.reader = TextReader(threads, min_score=0.5)
        except ValueError:
            pass
        try:
            from mediapipe.python.solutions.face_detection import FaceDetection
            self.detector = FaceDetection(model_selection=1, min_detection_confidence=0.5)
        except ImportError:
            pass

    def __call__(self, rgb: np.ndarray) -> Scene:
        scene = Scene(light=light_of(rgb), colours=colour_names(rgb), faces_known=self.detector is not None)
        if self.reader is not None:
            found = self.reader.scored(np.ascontiguousarray(rgb[:, :, ::-1]))
            scene.lines = [c for c in (clean_line(t) for t, s in found if s >= MIN_TEXT_SCORE) if c]
        if self.detector is not None:
            got = self.detector.process(np.ascontiguousarray(rgb)).detections or []
            for d in got:
                box = d.location_data.relative_bounding_box
                scene.faces.append(place(box.xmin + box.width / 2))
        return scene
