"""Echo cancellation: delay estimation, the canceller on a synthetic echo path, and the reference timeline."""
from __future__ import annotations

import numpy as np
import pytest

from edge.capture.delay import gcc_phat
from edge.capture.echo import AlignedEchoCanceller
from edge.capture.reference import ReferenceTimeline
from edge.capture.room import RoomEcho, RoomSettings

from duplex_helpers import RATE, say


def echo_path(x: np.ndarray, delay_ms: float, seed: int = 3) -> np.ndarray:
    """A loudspeaker-to-microphone path: bulk delay, then a short decaying impulse response."""
    rng = np.random.default_rng(seed)
    n = int(0.03 * RATE)
    ir = rng.standard_normal(n) * np.exp(-np.arange(n) / (0.005 * RATE))
    ir *= 0.8 / np.sqrt(np.sum(ir ** 2))
    d = int(delay_ms * RATE / 1000)
    return np.concatenate([np.zeros(d), np.convolve(x, ir)[:len(x) - d]]).astype(np.float32)


def run_canceller(mic: np.ndarray, ref: np.ndarray, block: int = 320) -> tuple[np.ndarray, AlignedEchoCanceller]:
    aec = AlignedEchoCanceller()
    n = len(mic) // block * block
    out = np.concatenate([aec.process(mic[i:i + block], ref[i:i + block]) for i in range(0, n, block)])
    return out, aec


def power_db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.asarray(x, np.float64) ** 2) + 1e-20))


@pytest.mark.parametrize("delay_ms", [40, 180, 700])
def test_synthetic_echo_path_is_cancelled_by_20_db_after_convergence(far_speech, delay_ms):
    mic = echo_path(far_speech, delay_ms) + 1e-4 * np.random.default_rng(0).standard_normal(len(far_speech))
    out, aec = run_canceller(mic.astype(np.float32), far_speech)
    tail = len(out) - 5 * RATE  # converged by then (a long delay is realigned at a pause, then reconverges)
    erle = power_db(mic[tail:len(out)]) - power_db(out[tail:])
    assert erle >= 20.0, f"only {erle:.1f} dB of echo removed"
    assert aec.delay_ms is not None and abs(aec.delay_ms - delay_ms) <= 2.0  # the bulk delay was found


def test_without_the_reference_nothing_is_cancelled(far_speech):
    """The check above can fail: with a silent reference the echo passes through."""
    mic = echo_path(far_speech, 40)
    out, _ = run_canceller(mic, np.zeros_like(far_speech))
    half = len(out) // 2
    assert power_db(mic[half:len(out)]) - power_db(out[half:]) < 6.0


def test_the_users_speech_survives_double_talk(far_speech):
    user = 0.3 * say("Wait, stop, can you tell me about the weather instead?", "en-gb", 150)
    mic = echo_path(far_speech, 100)
    at = len(mic) // 2
    mic[at:at + len(user)] += user
    out, _ = run_canceller(mic, far_speech)
    kept = power_db(out[at:at + len(user)]) - power_db(user)
    assert kept > -6.0, f"the user's speech lost {-kept:.1f} dB while the assistant talked"


def test_gcc_phat_finds_the_delay_of_filtered_speech(far_speech):
    ref = far_speech[:2 * RATE]
    mic = echo_path(far_speech, 123)[:2 * RATE + 8000]
    lag, conf = gcc_phat(ref, mic, 8000)
    assert abs(lag - int(0.123 * RATE)) <= 16 and conf > 8


def test_reference_timeline_joins_blocks_without_seams():
    rng = np.random.default_rng(1)
    x24 = rng.standard_normal(24000).astype(np.float32) * 0.1
    whole, pieces = ReferenceTimeline(), ReferenceTimeline()
    whole.add(0, x24, 24000)
    whole.add(1_000_000_000, np.zeros(0, np.float32), 24000)  # flushes the resampler
    for i in range(0, 24000, 480):
        pieces.add(i * 1_000_000_000 // 24000, x24[i:i + 480], 24000)
    pieces.add(1_000_000_000, np.zeros(0, np.float32), 24000)
    a, b = whole.take(0, 16000), pieces.take(0, 16000)
    assert np.max(np.abs(a - b)) < 1e-5
    assert pieces.covered_ns == 1_000_000_000
    assert not np.any(pieces.take(20000, 100))  # nothing played there: silence


def test_room_echo_streams_like_one_convolution():
    room = RoomEcho(RoomSettings(delay_ms=0))
    x = np.random.default_rng(2).standard_normal(8000).astype(np.float32)
    y = np.concatenate([room.echo(x[i:i + 320]) for i in range(0, 8000, 320)])
    assert np.allclose(y, np.convolve(x, room.ir)[:8000], atol=1e-4)


def test_bad_room_settings_get_a_sentence():
    with pytest.raises(ValueError, match="unknown room_echo setting"):
        RoomSettings.from_config({"delay": 3})
    with pytest.raises(ValueError, match="10 ms frames"):
        from edge.settings import duplex_settings
        duplex_settings({"echo_cancel": True, "chunk_ms": 333})


def test_with_no_echo_in_the_microphone_the_users_speech_passes_untouched(far_speech):
    """A headset, or a device that cancels echo itself: nothing of the reference reaches the microphone.

    The user speaks with the Piper voice: two espeak-ng voices share one pulse source, and an espeak user
    over an espeak reference correlates like an echo (measured GCC-PHAT peaks up to 58); people do not."""
    from edge.bench.duplex_suite import Synth, Voice

    user = 0.3 * Synth().say("Honey, have you seen my car keys anywhere? I left them on the table.",
                             Voice("piper", "", 1.0))
    mic = np.zeros_like(far_speech)
    at = len(mic) - len(user) - RATE
    mic[at:at + len(user)] = user
    mic += 1e-4 * np.random.default_rng(4).standard_normal(len(mic)).astype(np.float32)
    out, aec = run_canceller(mic, far_speech)
    assert not aec.echo_present
    assert np.array_equal(out[at:at + len(user)], mic[at:at + len(user)])


def test_the_sample_window_keeps_the_newest_samples_and_silence_elsewhere():
    from edge.capture.window import SampleWindow

    w = SampleWindow(keep=1000)
    x = np.arange(10_000, dtype=np.float32)
    for i in range(0, 10_000, 320):  # 20 ms blocks, past the window's size several times
        w.put(100 + i, x[i:i + 320])
    assert np.array_equal(w.take(100 + 9000, 1000), x[9000:])  # the newest window is all there
    assert not np.any(w.take(0, 100))  # before anything was written: silence
    assert not np.any(w.take(100 + 10_000, 50))  # after the newest sample: silence
    assert np.array_equal(w.segment(100 + 9500, 100 + 20_000), x[9500:])  # clipped, not padded
