"""Features of a reference recording for the voice prompt, in NumPy (no torchaudio or librosa at build time).

Three views of the same voice, each the one its consumer was trained on:
- `whisper_log_mel(audio_16k, 128)`: the speech tokenizer's input (Whisper's recipe at 128 bins);
- `kaldi_fbank(audio_16k)`: the speaker-embedding graph's input (Kaldi's 80-bin log filterbank:
  25 ms povey frames every 10 ms, DC removed, pre-emphasis 0.97, 512-point FFT, 20 Hz to Nyquist);
- `prompt_mel(audio_24k)`: the flow model's prompt (80 Slaney bins 0-8 kHz of 1920-point frames every
  480 samples, magnitude, natural log floored at 1e-5), 50 frames a second, two per speech code.
"""

from __future__ import annotations

import numpy as np
from scipy import fft as sfft

from kernels.logmel import mel_filters


def _frames(a: np.ndarray, size: int, hop: int) -> np.ndarray:
    n = 1 + (len(a) - size) // hop
    return np.lib.stride_tricks.as_strided(a, (n, size), (a.strides[0] * hop, a.strides[0]))


def whisper_log_mel(audio: np.ndarray, n_mels: int = 128) -> np.ndarray:
    """(n_mels, frames) Whisper log-mel of 16 kHz audio: reflect-centred 400-point frames, last frame dropped."""
    a = np.pad(np.asarray(audio, np.float64), 200, mode="reflect")
    frames = _frames(a, 400, 160)[:-1]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    spec = sfft.rfft(frames * window, axis=1)
    mel = (spec.real ** 2 + spec.imag ** 2) @ mel_filters(16000, 400, n_mels).T
    log = np.log10(np.maximum(mel, 1e-10))
    log = np.maximum(log, log.max() - 8.0)
    return ((log + 4.0) / 4.0).T.astype(np.float32)


def _kaldi_mel(f: np.ndarray) -> np.ndarray:
    return 1127.0 * np.log1p(np.asarray(f, np.float64) / 700.0)


def kaldi_banks(n_bins: int = 80, sr: int = 16000, n_fft: int = 512, low: float = 20.0) -> np.ndarray:
    """(n_bins, n_fft // 2 + 1) triangles equally spaced on Kaldi's mel scale; the Nyquist bin has no weight."""
    lo, hi = _kaldi_mel(low), _kaldi_mel(sr / 2)
    delta = (hi - lo) / (n_bins + 1)
    mel = _kaldi_mel(np.arange(n_fft // 2) * sr / n_fft)
    banks = np.zeros((n_bins, n_fft // 2 + 1))
    for b in range(n_bins):
        left, centre, right = lo + b * delta, lo + (b + 1) * delta, lo + (b + 2) * delta
        up, down = (mel - left) / (centre - left), (right - mel) / (right - centre)
        banks[b, :-1] = np.maximum(0.0, np.minimum(up, down))
    return banks


def kaldi_fbank(audio: np.ndarray, n_bins: int = 80, sr: int = 16000) -> np.ndarray:
    """(frames, n_bins) log filterbank energies of audio in [-1, 1], frames cut without padding."""
    a = np.asarray(audio, np.float64)
    if len(a) < 400:
        raise ValueError(f"a filterbank needs at least 400 samples; got {len(a)}")
    frames = _frames(a, 400, 160).copy()
    frames -= frames.mean(axis=1, keepdims=True)
    frames[:, 1:] -= 0.97 * frames[:, :-1].copy()
    frames[:, 0] *= 1 - 0.97
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 399)) ** 0.85
    spec = sfft.rfft(frames * window, n=512, axis=1)
    power = spec.real ** 2 + spec.imag ** 2
    energy = power @ kaldi_banks(n_bins, sr).T
    return np.log(np.maximum(energy, np.finfo(np.float32).eps)).astype(np.float32)


def _slaney_mel(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, np.float64)
    return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-9) / 1000.0) / (np.log(6.4) / 27.0), f * 3 / 200)


def _slaney_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, np.float64)
    return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), m * 200 / 3)


def slaney_filters(sr: int, n_fft: int, n_mels: int, fmin: float, fmax: float) -> np.ndarray:
    """(n_mels, n_fft // 2 + 1) area-normalised triangles on Slaney's mel scale between fmin and fmax."""
    bins = np.linspace(0, sr / 2, n_fft // 2 + 1)
    edges = _slaney_hz(np.linspace(_slaney_mel(fmin), _slaney_mel(fmax), n_mels + 2))
    out = np.zeros((n_mels, len(bins)))
    for i in range(n_mels):
        lo, mid, hi = edges[i], edges[i + 1], edges[i + 2]
        out[i] = np.maximum(0.0, np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid))) * 2 / (hi - lo)
    return out


def prompt_mel(audio: np.ndarray, sr: int = 24000, n_fft: int = 1920, hop: int = 480) -> np.ndarray:
    """(frames, 80) log-magnitude mel of 24 kHz audio: reflect-padded by (n_fft - hop) / 2 on each side."""
    pad = (n_fft - hop) // 2
    a = np.pad(np.asarray(audio, np.float64), pad, mode="reflect")
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)  # periodic Hann
    spec = sfft.rfft(_frames(a, n_fft, hop) * window, axis=1)
    magnitude = np.sqrt(spec.real ** 2 + spec.imag ** 2 + 1e-9)
    mel = magnitude @ slaney_filters(sr, n_fft, 80, 0.0, 8000.0).T
    return np.log(np.maximum(mel, 1e-5)).astype(np.float32)
