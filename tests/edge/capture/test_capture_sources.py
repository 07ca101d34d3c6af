"""Live capture sources with stand-ins for the device libraries: Picamera2's pixel order, a 48 kHz microphone."""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import soundfile as sf
import soxr

from edge.audio_format import RATE
from edge.capture.audio import MicSource
from edge.capture.video import open_video_source

# An RGB scene: red top-left, green top-right, blue bottom half.
SCENE = np.zeros((4, 6, 3), np.uint8)
SCENE[:2, :3] = (255, 0, 0)
SCENE[:2, 3:] = (0, 255, 0)
SCENE[2:] = (0, 0, 255)


class StandInPicamera2:
    """Returns what Picamera2 returns per its manual ("Image formats"): libcamera's names, so "RGB888" is
    24-bit pixels in B, G, R order, "BGR888" in R, G, B order, "XRGB8888" B, G, R, 255."""

    layouts = {"RGB888": lambda s: s[:, :, ::-1], "BGR888": lambda s: s,
               "XRGB8888": lambda s: np.concatenate([s[:, :, ::-1], np.full(s.shape[:2] + (1,), 255, np.uint8)], 2)}

    def __init__(self) -> None:
        self.format = None
        self.started = False

    def create_video_configuration(self, main: dict) -> dict:
        return {"main": dict(main)}

    def configure(self, config: dict) -> None:
        self.format = config["main"]["format"]
        assert self.format in self.layouts, f"Picamera2 has no format {self.format}"

    def start(self) -> None:
        self.started = True

    def capture_array(self) -> np.ndarray:
        assert self.started
        return np.ascontiguousarray(self.layouts[self.format](SCENE))

    def stop(self) -> None:
        self.started = False


def test_picamera_frames_reach_the_pipeline_as_rgb(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=StandInPicamera2))
    source = open_video_source("picamera")
    frame = source.frame_at(0.0)
    assert frame.shape == SCENE.shape and frame.flags.c_contiguous
    assert frame[0, 0].tolist() == [255, 0, 0] and frame[3, 5].tolist() == [0, 0, 255]  # red stays red
    np.testing.assert_array_equal(frame, SCENE)
    source.close()


class StandInSoundDevice:
    """sounddevice's surface that MicSource uses: a 48 kHz device whose stream calls back with (frames, 1) blocks."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.stream = None

    def query_devices(self, device, kind):
        return {"default_samplerate": float(self.rate), "name": "USB Audio"}

    def InputStream(self, **kw):  # noqa: N802 (sounddevice's name)
        outer = self

        class Stream:
            def __init__(self) -> None:
                self.callback, self.blocksize = kw["callback"], kw["blocksize"]
                outer.stream = self

            def start(self) -> None: ...
            def stop(self) -> None: ...
            def close(self) -> None: ...

        return Stream()


def test_a_48khz_microphone_is_resampled_as_one_stream(monkeypatch) -> None:
    device = StandInSoundDevice(48000)
    monkeypatch.setitem(sys.modules, "sounddevice", device)
    mic = MicSource(None)
    assert device.stream.blocksize == 960  # 20 ms at the device's own rate
    rng = np.random.default_rng(0)
    t = np.arange(48000 * 2) / 48000
    signal = (0.5 * np.sin(2 * np.pi * 440 * t) + 0.1 * rng.standard_normal(len(t))).astype(np.float32)
    got = []
    for i in range(0, len(signal), 960):
        device.stream.callback(signal[i:i + 960, None], 960, None, None)
        while (block := mic.read(320)) is not None:
            got.append(block)
    got = np.concatenate(got)
    whole = soxr.resample(signal, 48000, RATE, quality="HQ")
    # all but a partial 20 ms read and the resampler's own delay (under 20 ms) came out, equal to resampling at once
    assert len(whole) - len(got) < 2 * 320
    tolerance = 1e-6
    assert np.abs(got - whole[:len(got)]).max() <= tolerance
    # resampling each block on its own (a fresh resampler per block) is what this guards against
    naive = np.concatenate([soxr.resample(signal[i:i + 960], 48000, RATE, quality="HQ")
                            for i in range(0, len(signal), 960)])
    assert np.abs(naive[:len(got)] - whole[:len(got)]).max() > 100 * tolerance
    mic.close()


def test_a_16khz_microphone_passes_through(monkeypatch) -> None:
    device = StandInSoundDevice(16000)
    monkeypatch.setitem(sys.modules, "sounddevice", device)
    mic = MicSource(None)
    block = np.linspace(-0.5, 0.5, 320, dtype=np.float32)
    device.stream.callback(block[:, None], 320, None, None)
    np.testing.assert_array_equal(mic.read(320), block)
    assert mic.read(1) is None


@pytest.mark.parametrize("fps", [0.0])
def test_a_frame_rate_of_zero_leaves_the_camera_unread(fps, tmp_path) -> None:
    """--video-fps 0 (the 8 GB boards' profile): capture opens no camera at all."""
    from edge.clock import MonotonicClock
    from edge.nodes.capture import CaptureNode
    from edge.settings import SessionConfig, node_settings

    io = types.SimpleNamespace(clock=MonotonicClock())
    cfg = SessionConfig(mic=str(_wav(tmp_path)), camera="picamera", video_fps=fps)
    node = CaptureNode(io, node_settings(cfg, ["capture"])["capture"], {})
    node.setup()  # the stand-in-less picamera would fail to open: it must not be asked
    assert node.video is None
    node.close()


def _wav(tmp_path):
    import soundfile as sf

    path = tmp_path / "mic.wav"
    sf.write(path, np.zeros(1600, np.float32), 16000)
    return path


def test_the_mic_names_a_file_by_its_suffix_or_its_presence(tmp_path) -> None:
    # The CLI, the capture node and the echo-cancel default all decide with this one function.
    from edge.capture.audio import FileAudioSource, mic_is_file, open_audio_source
    from edge.settings import duplex_settings
    wav = tmp_path / "take"  # no suffix, but on disk
    sf.write(str(wav), np.zeros(RATE, np.float32), RATE, format="WAV")
    assert mic_is_file(str(wav)) and isinstance(open_audio_source(str(wav)), FileAudioSource)
    assert mic_is_file(str(tmp_path / "missing.FLAC"))  # missing, yet a file: the CLI says it does not exist
    assert not any(mic_is_file(s) for s in (None, "", "default", "7", "USB Audio (hw:1,0)"))
    assert duplex_settings({"mic": str(wav)}).cancel is False  # a file holds no echo of this session
    assert duplex_settings({"mic": "default"}).cancel is True


def test_a_long_file_is_streamed_not_loaded_whole(tmp_path):
    """Ten minutes of 48 kHz stereo: reading its first second holds a few blocks, not the file, and the samples
    are what resampling the whole file at once gives."""
    import tracemalloc

    import soundfile as sf

    from edge.audio_format import RATE
    from edge.capture.audio import FileAudioSource
    from kernels.resample import resample, to_mono

    rng = np.random.default_rng(5)
    head = (0.1 * rng.standard_normal((48000 * 3, 2))).astype(np.float32)
    path = tmp_path / "long.wav"
    with sf.SoundFile(str(path), "w", 48000, 2, "PCM_16") as f:
        f.write(head)
        for _ in range(199):  # the rest: 597 s of quiet hum, written in pieces too
            f.write(np.full((48000 * 3, 2), 0.01, np.float32))
    tracemalloc.start()
    src = FileAudioSource(path)
    first = [src.read(1600) for _ in range(10)]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4_000_000, f"reading one second of a 10-minute file took {peak / 1e6:.1f} MB"
    assert src.duration_s == pytest.approx(600.0)
    got = np.concatenate(first)
    whole = resample(to_mono(sf.read(str(path), frames=48000 * 2, dtype="float32")[0]), 48000, RATE)
    np.testing.assert_allclose(got[100:RATE - 100], whole[100:RATE - 100], atol=2e-3)
    src.seek(RATE * 599)  # a restarted capture resumes near the end; then the file runs out
    rest = []
    while (block := src.read(4000)) is not None:
        rest.append(block)
    assert abs(sum(map(len, rest)) - RATE) < 50
    src.close()
