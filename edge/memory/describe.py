"""Scene descriptions for the embedded default: the text a frame shows, read by PP-OCRv4 (rapidocr-onnxruntime).

The models ship inside the wheel, so nothing is downloaded. A description is "text: " and the
words read, top to bottom and left to right; a frame with no text gets an empty description.
"""
from __future__ import annotations

import time

import numpy as np


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

    def __call__(self, frame: np.ndarray) -> str:
        """The description of one BGR uint8 frame."""
        start = time.process_time()
        found, _ = self._ocr(frame)
        self.seconds += time.process_time() - start
        self.frames += 1
        if not found:
            return ""
        # Reading order: rows (by the box's top edge, in bands of 20 px), then left to right.
        found.sort(key=lambda r: (round(min(p[1] for p in r[0]) / 20), min(p[0] for p in r[0])))
        return "text: " + " ".join(r[1] for r in found)
