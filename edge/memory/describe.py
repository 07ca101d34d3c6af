"""Scene descriptions for the embedded default: the text a frame shows (PP-OCRv4, rapidocr-onnxruntime) and
how many faces are in it (edge/memory/faces.py).

The models ship inside the wheels, so nothing is downloaded. A description is fields joined by "; ":
"text: " and the words read, top to bottom and left to right, and "faces: N" when a face counter runs;
a frame with nothing read and no counter gets an empty description.
"""
from __future__ import annotations

import logging
import re
import time

import numpy as np

log = logging.getLogger(__name__)

FIELDS = ("text", "faces")


def compose(text: str, faces: int | None) -> str:
    parts = ([f"text: {text}"] if text else []) + ([f"faces: {faces}"] if faces is not None else [])
    return "; ".join(parts)


def fields(description: str) -> dict[str, str]:
    """A description's fields by name ({"text": "EXIT", "faces": "1"}); unknown parts are left out."""
    found = re.split(rf"(?:^|;\s*)({'|'.join(FIELDS)}):\s*", description.strip())
    return {found[i]: found[i + 1].strip() for i in range(1, len(found) - 1, 2)}


class TextReader:
    def __init__(self, threads: int = 1, min_score: float = 0.5, side: int = 360) -> None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise ValueError("reading text in frames needs rapidocr-onnxruntime; install it with "
                             "pip install --no-deps rapidocr-onnxruntime pyclipper shapely six "
                             "(or the `models` extra)") from None
        # det_limit_type "min" scales the short side to `side`: camera frames need no more to read signs.
        self._ocr = RapidOCR(det_limit_side_len=side, det_limit_type="min", use_cls=False,
                             intra_op_num_threads=threads, inter_op_num_threads=1, text_score=min_score)
        self.seconds = 0.0   # CPU time spent reading, for benchmarks
        self.frames = 0

    def scored(self, frame: np.ndarray) -> list[tuple[str, float]]:
        """Each line read in one BGR uint8 frame with the reader's confidence, in reading order."""
        start = time.process_time()
        found, _ = self._ocr(frame)
        self.seconds += time.process_time() - start
        self.frames += 1
        # Reading order: rows (by the box's top edge, in bands of 20 px), then left to right.
        found = sorted(found or [], key=lambda r: (round(min(p[1] for p in r[0]) / 20), min(p[0] for p in r[0])))
        return [(r[1], float(r[2])) for r in found]

    def words(self, frame: np.ndarray) -> str:
        """The words read in one BGR uint8 frame, in reading order ("" when none)."""
        return " ".join(text for text, _ in self.scored(frame))

    def __call__(self, frame: np.ndarray) -> str:
        """The description of one BGR uint8 frame: its text only."""
        return compose(self.words(frame), None)


class SceneDescriber:
    """Text and faces: what the vision node says about a frame. Without mediapipe it reads text only, and says
    so once in the log."""

    def __init__(self, threads: int = 1) -> None:
        self.reader = TextReader(threads)
        self.faces = None
        try:
            from edge.memory.faces import FaceCounter
            self.faces = FaceCounter()
        except ValueError as exc:
            log.warning("scene descriptions hold text only: %s", exc)

    def __call__(self, frame: np.ndarray) -> str:
        return compose(self.reader.words(frame), self.faces(frame) if self.faces is not None else None)


def in_words(description: str) -> str:
    """A description as a phrase to say: 'the text "EXIT" and two faces' ("" when it holds nothing to say)."""
    f = fields(description)
    parts = [f'the text "{f["text"]}"'] if f.get("text") else []
    n = int(f["faces"]) if f.get("faces", "").isdigit() else 0
    if n:
        parts.append({1: "one face", 2: "two faces", 3: "three faces"}.get(n, f"{n} faces"))
    return " and ".join(parts)
