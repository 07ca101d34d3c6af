"""The log-mel front end: NumPy reference, fast path, faster-whisper and a torch.stft Whisper recipe agree."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from edge.audio_format import RATE
from kernels.logmel import HOP, N_FFT, SAMPLE_RATE, log_mel, log_mel_reference, mel_filters


def signals():
    rng = np.random.default_rng(0)
    t = np.arange(16000) / 16000
    yield "noise", (0.1 * rng.standard_normal(16000)).astype(np.float32)
    yield "tone", (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    yield "chirp", (0.3 * np.sin(2 * np.pi * (100 + 3000 * t) * t)).astype(np.float32)
    yield "quiet", (1e-4 * rng.standard_normal(12345)).astype(np.float32)


def torch_whisper(audio: np.ndarray) -> np.ndarray:
    """Whisper's own recipe written with torch.stft (centred, reflect padding, last frame dropped)."""
    x = torch.from_numpy(audio.astype(np.float32))
    spec = torch.stft(x, N_FFT, HOP, window=torch.hann_window(N_FFT), return_complex=True)
    power = spec[..., :-1].abs() ** 2
    mel = torch.from_numpy(mel_filters().astype(np.float32)) @ power
    logspec = torch.clamp(mel, min=1e-10).log10()
    logspec = torch.maximum(logspec, logspec.max() - 8.0)
    return ((logspec + 4.0) / 4.0).numpy()


@pytest.mark.parametrize("name,audio", list(signals()))
def test_fast_path_matches_the_reference_and_whisper_implementations(name, audio):
    from faster_whisper.feature_extractor import FeatureExtractor

    ref = log_mel_reference(audio)
    fast = log_mel(audio)
    fw = FeatureExtractor()(audio, padding=0)
    assert fast.shape == ref.shape == fw.shape == (80, len(audio) // HOP)
    np.testing.assert_allclose(fast, ref, atol=1e-4)  # float32 path against the float64 reference
    np.testing.assert_allclose(fast, fw, atol=1e-4)
    np.testing.assert_allclose(fast, torch_whisper(audio), atol=1e-4)


def test_filters_match_faster_whisper():
    from faster_whisper.feature_extractor import FeatureExtractor

    np.testing.assert_allclose(mel_filters(), FeatureExtractor.get_mel_filters(16000, 400, 80), rtol=1e-6,
                               atol=1e-9)


def test_one_second_gives_100_frames_and_bad_input_is_refused():
    assert log_mel(np.zeros(16000, np.float32)).shape == (80, 100)
    with pytest.raises(ValueError, match="mono audio"):
        log_mel(np.zeros((2, 16000), np.float32))
    with pytest.raises(ValueError, match="more than 200 samples"):
        log_mel(np.zeros(100, np.float32))


def test_the_kernel_reads_audio_at_the_runtime_rate() -> None:
    # The mel filters are laid out for SAMPLE_RATE: audio at any other rate would give shifted features.
    assert SAMPLE_RATE == RATE
