"""The 80-bin log-mel front end of the audio encoder (Whisper's features), per chunk.

Whisper's recipe: 25 ms periodic Hann window, 10 ms hop, centred frames with
reflect padding, power spectrum, Slaney mel filters, log10 floored at 1e-10,
clamped to 8 below the maximum, then (x + 4) / 4. The last frame is dropped,
so one second of 16 kHz audio gives 100 frames. `log_mel_reference` is the
plain per-frame version; `log_mel` is the vectorised float32 path the runtime
calls on a whole clip. `block_log_mel` is the streaming form the runtime's
audio encoder computes per 1 s block (the samples before the block as left
context); training computes the same, so both see identical features.
Parity-tested against faster-whisper and torch.stft.
"""
from __future__ import annotations

import functools

import numpy as np

SAMPLE_RATE = 16000  # edge.audio_format.RATE; kernels import nothing of the project, a test ties the two
N_FFT = 400
HOP = 160
N_MELS = 80


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above."""
    f = np.asarray(f, np.float64)
    lin = f / (200.0 / 3)
    log = 15.0 + np.log(np.maximum(f, 1e-9) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(f >= 1000.0, log, lin)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, np.float64)
    return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), m * (200.0 / 3))


@functools.lru_cache(maxsize=8)
def mel_filters(sr: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """(n_mels, n_fft // 2 + 1) triangular filters, area-normalised (Slaney), spanning 0 .. sr / 2."""
    bins = np.linspace(0, sr / 2, n_fft // 2 + 1)
    edges = _mel_to_hz(np.linspace(0.0, _hz_to_mel(np.array(sr / 2.0)), n_mels + 2))
    out = np.zeros((n_mels, len(bins)))
    for i in range(n_mels):
        lo, mid, hi = edges[i], edges[i + 1], edges[i + 2]
        rise = (bins - lo) / (mid - lo)
        fall = (hi - bins) / (hi - mid)
        out[i] = np.maximum(0.0, np.minimum(rise, fall)) * (2.0 / (hi - lo))
    return out


@functools.lru_cache(maxsize=4)
def _window(n_fft: int) -> np.ndarray:
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft))  # periodic Hann


def _check(audio: np.ndarray) -> np.ndarray:
    a = np.asarray(audio)
    if a.ndim != 1:
        raise ValueError(f"log-mel needs mono audio as a 1-D array; got shape {a.shape}")
    if len(a) <= N_FFT // 2:
        raise ValueError(f"log-mel needs more than {N_FFT // 2} samples (reflect padding); got {len(a)}")
    return a


def _finish(logspec: np.ndarray) -> np.ndarray:
    logspec = np.maximum(logspec, logspec.max() - 8.0)
    return ((logspec + 4.0) / 4.0).astype(np.float32)


def log_mel_reference(audio: np.ndarray) -> np.ndarray:
    """Plain float64 per-frame reference: (N_MELS, frames)."""
    a = np.pad(_check(audio).astype(np.float64), N_FFT // 2, mode="reflect")
    n_frames = 1 + (len(a) - N_FFT) // HOP
    win, filt = _window(N_FFT), mel_filters()
    power = np.empty((N_FFT // 2 + 1, n_frames))
    for k in range(n_frames):
        spec = np.fft.rfft(a[k * HOP:k * HOP + N_FFT] * win)
        power[:, k] = spec.real ** 2 + spec.imag ** 2
    mel = filt @ power[:, :-1]
    return _finish(np.log10(np.maximum(mel, 1e-10)))


def log_mel(audio: np.ndarray) -> np.ndarray:
    """Vectorised float32 path: strided frames, one batched real FFT, one matmul."""
    from scipy import fft as sfft

    a = np.pad(_check(audio).astype(np.float32), N_FFT // 2, mode="reflect")
    n_frames = (len(a) - N_FFT) // HOP  # the last frame is dropped
    frames = np.lib.stride_tricks.as_strided(a, (n_frames, N_FFT), (a.strides[0] * HOP, a.strides[0]))
    spec = sfft.rfft(frames * _window(N_FFT).astype(np.float32), axis=1)
    power = (spec.real * spec.real + spec.imag * spec.imag).astype(np.float32)
    mel = power @ mel_filters().astype(np.float32).T  # (frames, mels)
    return _finish(np.log10(np.maximum(mel, 1e-10)).T)


def block_log_mel(block: np.ndarray, context: np.ndarray | None) -> np.ndarray:
    """(80, len(block) // 160) Whisper log-mel of a block: `context` (the samples before it, or None at the
    start of a stream: reflect padding) on the left, reflect padding on the right."""
    from scipy import fft as sfft  # imported when first needed: a restarted node must come back quickly

    half = N_FFT // 2
    left = context[-half:] if context is not None and len(context) >= half else block[1:half + 1][::-1]
    a = np.concatenate([left, block, block[-half - 1:-1][::-1]]).astype(np.float32)
    n = len(block) // HOP
    frames = np.lib.stride_tricks.as_strided(a, (n, N_FFT), (a.strides[0] * HOP, a.strides[0]))
    spec = sfft.rfft(frames * _window(N_FFT).astype(np.float32), axis=1)
    mel = (spec.real * spec.real + spec.imag * spec.imag).astype(np.float32) @ mel_filters().astype(np.float32).T
    log = np.log10(np.maximum(mel, 1e-10))
    return ((np.maximum(log, log.max() - 8.0) + 4.0) / 4.0).T.astype(np.float32)
