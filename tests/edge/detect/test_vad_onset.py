"""Silero VAD streamed over 32 ms frames, and the onset detector that ducks playback."""
from __future__ import annotations

import numpy as np
import pytest

from edge.bench import spoken
from edge.detect.onset import OnsetDetector
from edge.detect.vad import FRAME, SileroVad


@pytest.fixture(scope="module")
def speech():
    audio = np.zeros(64000, np.float32)
    clip = spoken.say("Hello, can you hear me now?")
    audio[16000:16000 + len(clip)] = 0.8 * clip
    return audio, 1_000_000_000, 1_000_000_000 + len(clip) * 1_000_000_000 // 16000


def test_model_inputs_are_the_streaming_ones():
    vad = SileroVad()
    assert {i.name for i in vad.session.get_inputs()} == {"input", "state", "sr"}


def test_streaming_in_pieces_equals_one_call(speech):
    audio, _, _ = speech
    whole = [(f.prob, f.rms) for f in SileroVad().feed(audio, 0)]
    vad = SileroVad()
    pieces, i, rng = [], 0, np.random.default_rng(0)
    while i < len(audio):
        n = int(rng.integers(100, 3000))
        pieces += [(f.prob, f.rms) for f in vad.feed(audio[i:i + n], None if i else 0)]
        i += n
    assert len(pieces) == len(whole) == len(audio) // FRAME
    np.testing.assert_allclose(pieces, whole, atol=1e-6)
    # Each frame's level comes with it, so the onset detector never needs the samples the VAD holds back.
    frames = audio[:len(whole) * FRAME].reshape(-1, FRAME)
    np.testing.assert_allclose([r for _, r in whole], np.sqrt(np.mean(frames ** 2, axis=1)), rtol=1e-5)


def test_speech_and_silence_are_told_apart(speech):
    audio, t_on, t_off = speech
    frames = SileroVad().feed(audio, 0)
    voiced = [f for f in frames if f.prob > 0.5]
    assert voiced and all(t_on - 64_000_000 <= f.t_start_ns <= t_off for f in voiced)
    assert max(f.prob for f in frames if f.t_start_ns < t_on - 100_000_000) < 0.2


def test_onset_is_declared_within_100_ms(speech):
    audio, t_on, t_off = speech
    det = OnsetDetector()
    events = []
    for i in range(0, len(audio), 320):  # 20 ms blocks, as a microphone delivers them
        events += det.feed(audio[i:i + 320], None if i else 0)
    onsets = [e for e in events if e.kind == "onset"]
    assert len(onsets) == 1
    assert onsets[0].detected_ns - t_on <= 100_000_000
    assert abs(onsets[0].onset_ns - t_on) <= 64_000_000
    offsets = [e for e in events if e.kind == "offset"]
    assert len(offsets) == 1 and offsets[0].onset_ns >= t_off - 100_000_000


def test_silence_and_hum_never_duck():
    t = np.arange(32000) / 16000
    hum = (0.05 * np.sin(2 * np.pi * 50 * t)).astype(np.float32)
    assert OnsetDetector().feed(np.concatenate([np.zeros(16000, np.float32), hum]), 0) == []
