"""Audio sources: a file (WAV, FLAC, anything libsndfile reads) or a microphone (sounddevice).

`--mic` picks one (`mic_is_file`); a journal is replayed through a file that
edge/replay.py writes from its chunks. Every source yields 16 kHz mono
float32. Files are read block by block, and a file or microphone at another rate goes
through one streaming resampler, whose state carries across blocks (a resampler started
afresh per block leaves a seam at every block edge).
"""
from __future__ import annotations

import queue
from pathlib import Path
from typing import Protocol

import numpy as np

from edge.audio_format import RATE
from edge.devices import DeviceError, sound_device
from kernels.resample import to_mono


class AudioSource(Protocol):
    live: bool  # a device that paces itself (True) or a file read at the caller's pace (False)

    def read(self, n: int) -> np.ndarray | None:
        """Up to n samples; fewer only at the end of a file; None when nothing is left (or not yet, live)."""

    def close(self) -> None: ...


class FileAudioSource:
    """A file read block by block (an hour of audio is never held whole); another rate through one streaming
    resampler. `seek` (a restarted capture resuming) starts the resampler afresh at that point."""

    live = False
    BLOCK = 8192  # source frames decoded per refill

    def __init__(self, path: str | Path) -> None:
        import soundfile as sf

        p = Path(path)
        if not p.is_file():
            raise DeviceError(f"audio file {p} does not exist; pass an existing WAV or FLAC file to --mic")
        try:
            self.file = sf.SoundFile(str(p))
        except Exception as exc:
            raise DeviceError(f"cannot read {p} as audio ({exc}); use a WAV or FLAC file") from None
        self.path = p
        self.rate = self.file.samplerate
        self.duration_s = self.file.frames / self.rate
        self._start(0)

    def _start(self, source_frame: int) -> None:
        self.file.seek(source_frame)
        self.resampler = StreamResampler(self.rate)
        self._buf = np.zeros(0, np.float32)
        self._ended = False

    def seek(self, sample: int) -> None:
        self._start(max(0, min(int(round(sample * self.rate / RATE)), self.file.frames)))

    def _refill(self) -> None:
        try:
            block = self.file.read(self.BLOCK, dtype="float32", always_2d=False)
        except Exception as exc:
            raise DeviceError(f"cannot read {self.path} past {self.file.tell()} frames ({exc})") from None
        last = len(block) < self.BLOCK
        self._buf = np.concatenate([self._buf, self.resampler.process(to_mono(block), last=last)])
        self._ended = last

    def read(self, n: int) -> np.ndarray | None:
        while len(self._buf) < n and not self._ended:
            self._refill()
        if not len(self._buf):
            return None
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def close(self) -> None:
        self.file.close()


class StreamResampler:
    """Blocks in at `src_rate`, blocks out at 16 kHz, as if the whole signal had been resampled at once."""

    def __init__(self, src_rate: int, dst_rate: int = RATE) -> None:
        import soxr

        self.same = src_rate == dst_rate
        self.stream = None if self.same else soxr.ResampleStream(src_rate, dst_rate, 1, dtype="float32", quality="HQ")

    def process(self, block: np.ndarray, last: bool = False) -> np.ndarray:
        block = np.ascontiguousarray(block, dtype=np.float32)
        if self.stream is None:
            return block
        return self.stream.resample_chunk(block, last=last)


class MicSource:
    """A microphone through PortAudio; the callback only queues, the node thread does the rest."""

    live = True

    def __init__(self, device: str | int | None, block_ms: int = 20) -> None:
        sd, info = sound_device(device, "input")
        self.rate = int(info["default_samplerate"])
        self.resampler = StreamResampler(self.rate)
        self._q: queue.Queue[np.ndarray] = queue.Queue()
        self._buf = np.zeros(0, dtype=np.float32)
        self.overflows = 0

        def callback(indata, frames, t, status) -> None:  # PortAudio thread: copy and go
            if status:
                self.overflows += 1
            self._q.put(indata[:, 0].copy())

        self._stream = sd.InputStream(device=device, channels=1, samplerate=self.rate, dtype="float32",
                                      blocksize=int(self.rate * block_ms / 1000), callback=callback)
        self._stream.start()

    def read(self, n: int) -> np.ndarray | None:
        while True:
            try:
                block = self._q.get_nowait()
            except queue.Empty:
                break
            self._buf = np.concatenate([self._buf, self.resampler.process(block)])
        if len(self._buf) < n:
            return None
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def close(self) -> None:
        self._stream.stop()
        self._stream.close()


FILE_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".aif", ".aiff")  # what libsndfile reads


def mic_is_file(spec: str | None) -> bool:
    """`--mic` names a file when it ends in an audio file's suffix or exists on disk; otherwise a microphone.

    A missing `take.wav` is still a file (so the user hears that it does not exist), never a device name.
    """
    return bool(spec) and (Path(str(spec)).suffix.lower() in FILE_SUFFIXES or Path(str(spec)).exists())


def open_audio_source(spec: str | None) -> AudioSource:
    """A file (see `mic_is_file`), or a microphone by index or name ("default" or nothing: the system's)."""
    if mic_is_file(spec):
        return FileAudioSource(spec)
    device: str | int | None = None
    if spec not in (None, "", "default"):
        device = int(spec) if str(spec).isdigit() else spec
    return MicSource(device)
