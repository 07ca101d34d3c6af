"""The speech embedding wake words are classified over: openWakeWord's packaged ONNX models (Apache-2.0 code).

Two models ship inside the `openwakeword` wheel: a melspectrogram (32 bands
every 10 ms) and Google's speech-embedding network, which turns 76 bands
(775 ms) into 96 numbers. One embedding is made every 80 ms (1280 samples);
a wake-word classifier reads the last 16 of them. The files are opened
directly so the package's other imports (scikit-learn, tflite) are not needed.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

STEP = 1280  # samples per embedding: 80 ms at 16 kHz
SPAN = 12800  # samples one embedding reads in a stream (76 bands need 12 560)
BANDS = 76


class EmbeddingMissing(RuntimeError):
    """openwakeword is not installed, so its feature models cannot be found."""


def models_dir() -> Path:
    spec = importlib.util.find_spec("openwakeword")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingMissing("the trained wake words need openwakeword's feature models; install them with "
                               "`pip install openwakeword==0.4.0 --no-deps`.")
    return Path(spec.submodule_search_locations[0]) / "resources" / "models"


class SpeechEmbedding:
    """Melspectrogram then embedding, for whole recordings (`embed`) or a stream (`Stream`)."""

    def __init__(self) -> None:
        import onnxruntime as ort
        folder = models_dir()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        self.mel = ort.InferenceSession(str(folder / "melspectrogram.onnx"), opts, providers=["CPUExecutionProvider"])
        self.net = ort.InferenceSession(str(folder / "embedding_model.onnx"), opts, providers=["CPUExecutionProvider"])

    def bands(self, audio: np.ndarray) -> np.ndarray:
        pcm = np.round(np.clip(audio, -1.0, 1.0) * 32767).astype(np.float32)[None]  # the models read int16 scale
        return self.mel.run(None, {"input": pcm})[0][0, 0] / 10 + 2  # the scaling the embedding was trained on

    def of_bands(self, windows: np.ndarray) -> np.ndarray:
        return self.net.run(None, {"input_1": windows[..., None].astype(np.float32)})[0].reshape(len(windows), 96)

    def embed(self, audio: np.ndarray) -> np.ndarray:
        """(n, 96): embedding i reads samples [1280 i, 1280 i + 12400)."""
        bands = self.bands(audio)
        starts = range(0, len(bands) - BANDS + 1, 8)
        if not starts:
            return np.zeros((0, 96), np.float32)
        return self.of_bands(np.stack([bands[s:s + BANDS] for s in starts]))


def frame_end(i: int) -> int:
    """The sample just after what `embed`'s i-th embedding reads."""
    return STEP * i + 12400
