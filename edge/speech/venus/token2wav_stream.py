"""Streaming token2wav over the three exported graphs, in NumPy (no torch needed at run time).

It follows the reference stream step for step (see export/torch_ref/token2wav_ref.py
for the contract): a set-up pass over the voice prompt, then windows of 28
codes every 25, with the flow caches trimmed to prompt + 100 frames and the
vocoder's 8-frame / 3840-sample overlap and Hamming cross-fade.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Runner = Callable[[dict[str, np.ndarray]], list[np.ndarray]]
NoiseSource = Callable[[int, int], tuple[np.ndarray, np.ndarray]]

# Defaults of the reference stream; a bundle manifest records the values it was built with.
STREAM_DEFAULTS: dict[str, Any] = {
    "chunk_codes": 25,
    "lookahead_codes": 3,
    "window_codes": 28,
    "silence_code": 4218,
    "mel_per_code": 2,
    "samples_per_mel": 480,
    "mel_cache_frames": 8,
    "source_cache_samples": 3840,
    "keep_recent_frames": 100,
    "sample_rate": 24000,
}


@dataclass
class FlowShapes:
    """Cache geometry of a flow model, read from its graphs' inputs."""

    conformer_layers: int
    conformer_heads: int
    conformer_width: int  # encoder channels (cnn cache rows)
    conformer_kv: int  # 2 * d_k
    dit_depth: int
    dit_heads: int
    dit_kv: int  # 2 * head_dim
    dit_cnn: int  # 2 * hidden


def numpy_noise(seed: int, harmonics: int = 9) -> NoiseSource:
    """Vocoder noise for a runtime: uniform start phases, unit normal sample noise, from NumPy."""
    rng = np.random.default_rng(seed)

    def draw(call: int, mel_frames: int) -> tuple[np.ndarray, np.ndarray]:
        samples = mel_frames * STREAM_DEFAULTS["samples_per_mel"]
        return (rng.random((1, harmonics), dtype=np.float32),
                rng.standard_normal((1, samples, harmonics), dtype=np.float32))

    return draw


@dataclass
class GraphStream:
    """Drives encoder / sampler step / vocoder runners as one streaming token2wav."""

    encoder: Runner
    step: Runner
    vocoder: Runner
    shapes: FlowShapes
    noise: np.ndarray  # (1, 80, N) fixed sampler noise
    t_span: np.ndarray  # (n_timesteps + 1,) float32
    vocoder_noise: NoiseSource
    params: dict[str, Any] = field(default_factory=lambda: dict(STREAM_DEFAULTS))

    def _empty_caches(self) -> None:
        s = self.shapes
        self.conf_cnn = np.zeros((1, s.conformer_width, 2 + 2 * 2), np.float32)
        self.conf_att = np.zeros((s.conformer_layers, 1, s.conformer_heads, 0, s.conformer_kv), np.float32)
        steps = len(self.t_span) - 1
        self.dit_cnn = [np.zeros((s.dit_depth, 2, s.dit_cnn, 2), np.float32) for _ in range(steps)]
        self.dit_att = [np.zeros((s.dit_depth, 2, s.dit_heads, 0, s.dit_kv), np.float32) for _ in range(steps)]

    def _flow(self, codes: np.ndarray, pad: int, cond: np.ndarray | None) -> np.ndarray:
        """Encoder then the Euler sampler for one window; updates the caches; returns mel (1, 80, T)."""
        width = self.shapes.conformer_width
        mu, spk, self.conf_cnn, self.conf_att = self.encoder({
            "token": codes.astype(np.int64)[None], "lookahead_pad": np.zeros((1, pad, width), np.float32),
            "spk_embedding": self.spk, "cnn_cache": self.conf_cnn, "att_cache": self.conf_att})
        self.spk_proj = spk
        frames = mu.shape[2]
        offset = self.dit_att[0].shape[3]
        x = self.noise[:, :, offset:offset + frames].astype(np.float32)
        cond = np.zeros_like(mu) if cond is None else cond
        ts = self.t_span
        t, dt = ts[:1].copy(), (ts[1] - ts[0]).reshape(1)
        for step in range(1, len(ts)):
            x, self.dit_cnn[step - 1], self.dit_att[step - 1] = self.step({
                "x": x, "mu": mu, "spk": spk, "cond": cond, "t": t, "dt": dt,
                "cnn_cache": self.dit_cnn[step - 1], "att_cache": self.dit_att[step - 1]})
            t = (t + dt).astype(np.float32)
            if step < len(ts) - 1:
                dt = (ts[step + 1] - t).astype(np.float32)
        return x

    def setup(self, prompt_tokens: np.ndarray, prompt_mel: np.ndarray, spk_embedding: np.ndarray) -> None:
        """Prime the caches with the reference voice: codes (P,), mel (2P, 80), speaker vector (192,)."""
        p = self.params
        self.spk = np.asarray(spk_embedding, np.float32).reshape(1, -1)
        self.prompt_frames = int(prompt_mel.shape[0])
        self._empty_caches()
        codes = np.concatenate([np.asarray(prompt_tokens, np.int64),
                                np.full(p["lookahead_codes"], p["silence_code"], np.int64)])
        self._flow(codes, 0, np.asarray(prompt_mel, np.float32).T[None])
        self.hift_mel = np.zeros((1, 80, 0), np.float32)
        self.hift_source = np.zeros((1, 1, 0), np.float32)
        self.hift_speech = np.zeros((1, 0), np.float32)
        self.calls = 0

    def _trim(self) -> None:
        keep, recent = self.prompt_frames, self.params["keep_recent_frames"]
        for i, att in enumerate(self.dit_att):
            if att.shape[3] > keep + recent:
                self.dit_att[i] = np.concatenate([att[:, :, :, :keep], att[:, :, :, -recent:]], axis=3)
        if self.conf_att.shape[3] > keep + recent:
            att = self.conf_att
            self.conf_att = np.concatenate([att[:, :, :, :keep], att[:, :, :, -recent:]], axis=3)

    def push(self, codes: np.ndarray, last: bool = False) -> np.ndarray:
        """One window of codes -> the waveform it releases (float32 samples at 24 kHz)."""
        p = self.params
        mel = self._flow(np.asarray(codes), p["lookahead_codes"] if last else 0, None)
        self._trim()
        self.last_mel = mel[0].copy()  # (80, frames): the flow's output, kept for parity checks
        mel = np.concatenate([self.hift_mel, mel], axis=2)
        rand_ini, sine_noise = self.vocoder_noise(self.calls, mel.shape[2])
        self.calls += 1
        speech, source = self.vocoder({"mel": mel, "cache_source": self.hift_source,
                                       "rand_ini": rand_ini, "sine_noise": sine_noise})
        overlap = p["source_cache_samples"]
        if self.hift_speech.shape[1] > 0:
            window = np.hamming(2 * overlap).astype(np.float32)
            speech = speech.copy()
            speech[:, :overlap] = speech[:, :overlap] * window[:overlap] + self.hift_speech * window[overlap:]
        self.hift_mel = mel[:, :, -p["mel_cache_frames"]:]
        self.hift_source = source[:, :, -overlap:]
        self.hift_speech = speech[:, -overlap:]
        if not last:
            speech = speech[:, :-overlap]
        return speech[0].astype(np.float32)
