"""Recorded chunk audio to LLM embeddings through a bundle's ONNX audio encoder, chunk by chunk.

The log-mel follows Whisper's front end (16 kHz, 25 ms Hann window, 10 ms hop,
80 Slaney mel bins, log10 clamped to 8 below the peak, scaled (x + 4) / 4).
A streaming encoder graph (inputs `mel` and `past_kv`, outputs `embeddings`
and `present_kv`) gets its cache carried from chunk to chunk and emptied
before it would outgrow the position table, as the graph's contract says.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

SAMPLE_RATE, N_FFT, HOP = 16000, 400, 160


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, dtype=np.float64)
    lin = f / (200.0 / 3)
    log_part = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(f >= 1000.0, log_part, lin)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), m * (200.0 / 3))


@lru_cache(maxsize=4)
def mel_filters(n_mels: int = 80) -> np.ndarray:
    """Slaney-normalised triangular filters, shape (n_mels, N_FFT // 2 + 1)."""
    freqs = np.linspace(0, SAMPLE_RATE / 2, N_FFT // 2 + 1)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(SAMPLE_RATE / 2), n_mels + 2))
    lower = (freqs[None, :] - edges[:-2, None]) / (edges[1:-1] - edges[:-2])[:, None]
    upper = (edges[2:, None] - freqs[None, :]) / (edges[2:] - edges[1:-1])[:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    return (weights * (2.0 / (edges[2:] - edges[:-2]))[:, None]).astype(np.float32)


def log_mel(audio: np.ndarray, n_mels: int = 80) -> np.ndarray:
    """(n_mels, frames) log-mel of 16 kHz mono float audio; 100 frames per second."""
    x = np.asarray(audio, dtype=np.float32)
    x = np.pad(x, (N_FFT // 2, N_FFT // 2), mode="reflect" if len(x) > N_FFT // 2 else "constant")
    n_frames = 1 + (len(x) - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n_frames)[:, None]
    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)  # periodic Hann
    power = np.abs(np.fft.rfft(x[idx] * window, axis=1)) ** 2
    mel = mel_filters(n_mels) @ power[:-1].T  # the last frame is dropped, as Whisper does
    logm = np.log10(np.maximum(mel, 1e-10))
    logm = np.maximum(logm, logm.max() - 8.0)
    return ((logm + 4.0) / 4.0).astype(np.float32)


class AudioEmbedder:
    """Embeds chunks in order with one ONNX encoder, carrying its streaming cache."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        import onnx
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name: i for i in self.sess.get_inputs()}
        if "mel" not in self.inputs:
            raise ValueError(f"{path.name} has no 'mel' input; is it an audio encoder graph?")
        self.n_mels = int(self.inputs["mel"].shape[1])
        self.max_positions = 1500
        for init in onnx.load(str(path), load_external_data=False).graph.initializer:
            if "embed_positions" in init.name:
                self.max_positions = int(init.dims[0])
        self.past: np.ndarray | None = None

    def _empty_past(self) -> np.ndarray:
        shape = [0 if not isinstance(d, int) else d for d in self.inputs["past_kv"].shape]
        return np.zeros(shape, dtype=np.float32)

    def __call__(self, audio: np.ndarray) -> np.ndarray:
        mel = log_mel(audio, self.n_mels)[None]
        feed: dict[str, np.ndarray] = {"mel": mel}
        if "past_kv" in self.inputs:
            positions = -(-mel.shape[-1] // 2)
            if self.past is None or self.past.shape[4] + positions > self.max_positions:
                self.past = self._empty_past()
            feed["past_kv"] = self.past
        outs = self.sess.run(None, {k: v.astype(np.float16 if "float16" in self.inputs[k].type else np.float32)
                                    for k, v in feed.items()})
        if "past_kv" in self.inputs and len(outs) > 1:
            self.past = np.asarray(outs[1], dtype=np.float32)
        emb = np.asarray(outs[0], dtype=np.float32)
        return emb.reshape(-1, emb.shape[-1])
