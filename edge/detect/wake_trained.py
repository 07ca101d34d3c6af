"""The wake words trained here (export/train/wake_word.py): a classifier over the last 16 speech embeddings.

The model and its cut-off live in edge/assets/wake/<name>.onnx and .json. A
stream is scored every 80 ms: the new 1280 samples complete one embedding
(read from the last 12 800 samples, edge/detect/wake_embedding.py) and the
classifier scores the 16 newest. A step's score is the lowest of the last
`hold` (3: 240 ms), so a single high step in ordinary speech does not wake.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from edge.detect.wake_embedding import SPAN, STEP, SpeechEmbedding

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "wake"
WINDOW = 16


def trained_words() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in ASSETS.glob("*.onnx") if p.with_suffix(".json").is_file()))


class TrainedWake:
    """One stream through one trained wake word; `scores` returns a score per 80 ms completed."""

    step_s = STEP / 16000

    def __init__(self, name: str) -> None:
        import onnxruntime as ort
        meta = json.loads((ASSETS / f"{name}.json").read_text())
        self.word: str = meta["word"]
        self.cutoff: float = float(meta["cutoff"])
        # a step's score is the lowest of the last `hold` steps: a one-step spike does not wake
        self.hold = int(meta.get("hold", 1))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        self.net = ort.InferenceSession(str(ASSETS / f"{name}.onnx"), opts, providers=["CPUExecutionProvider"])
        self.features = SpeechEmbedding()
        # a fresh stream starts as if quiet had been heard for the whole window, so it is scored from its first 80 ms
        self.quiet = self.features.of_bands(self.features.bands(np.zeros(SPAN, np.float32))[-76:][None])
        self.reset()

    def reset(self) -> None:
        self.audio = np.zeros(SPAN, np.float32)  # the stream's last samples, starting from quiet
        self.pending = 0  # samples received since the last embedding
        self.recent = np.repeat(self.quiet, WINDOW, axis=0)
        self.raw = [0.0] * self.hold

    def scores(self, audio: np.ndarray) -> np.ndarray:
        audio = np.asarray(audio, np.float32)
        out: list[float] = []
        while len(audio):
            take = min(len(audio), STEP - self.pending)
            self.audio = np.concatenate([self.audio[take:], audio[:take]])
            self.pending += take
            audio = audio[take:]
            if self.pending == STEP:
                self.pending = 0
                bands = self.features.bands(self.audio)[-76:]
                emb = self.features.of_bands(bands[None])
                self.recent = np.concatenate([self.recent, emb])[-WINDOW:]
                self.raw = self.raw[1:] + [float(self.net.run(None, {"embeddings": self.recent[None]})[0].ravel()[0])]
                out.append(min(self.raw))
        return np.asarray(out, np.float32)
