"""Where speech goes: a time-aligned WAV file, a speaker (sounddevice), or nowhere.

The WAV sink places every sample at its session time, with silence where
the assistant is silent, so a session can be scored against its input.
"""
from __future__ import annotations

import errno
import logging
from pathlib import Path
from typing import Protocol

import numpy as np
import soundfile as sf

from edge.devices import sound_device
from edge.private_files import open_private, private_dir

log = logging.getLogger(__name__)


class AudioSink(Protocol):
    rate: int

    def write(self, t_ns: int, samples: np.ndarray) -> None: ...
    def close(self, end_ns: int | None = None) -> None: ...


class TimelineWavSink:
    """Writes 16-bit PCM at session time. While running, samples go to `PATH.part` (raw, append-only),
    so a restarted speech node continues the same file; the WAV is written on close. Both are 0600.

    A write the disk refuses (full) never stops the speech: those samples become silence in the file,
    the failure is said once (`error`), and later audio is written as soon as the disk takes it again."""

    WINDOW_S = 120

    def __init__(self, path: str | Path, rate: int = 24000) -> None:
        self.path = Path(path)
        private_dir(self.path.parent)
        self.rate = rate
        self.part = self.path.with_name(self.path.name + ".part")
        self._raw = open_private(self.part, "ab", buffering=0)  # a restart appends after what is already there
        self._good = self._raw.tell() // 2 * 2  # bytes on disk, whole samples only
        self._base = self._good // 2  # sample index of _buf[0]; everything before it is on disk (or owed as silence)
        self._gap = 0  # samples lost to a refused write, written as silence once the disk takes them
        self._buf = np.zeros(0, np.float32)
        self.error: str | None = None
        self.closed = False

    def write(self, t_ns: int, samples: np.ndarray) -> None:
        start = int(round(t_ns * self.rate / 1e9)) - self._base
        if start < 0:  # older than what is on disk: keep what still fits
            samples, start = samples[-start:], 0
        end = start + len(samples)
        if end > len(self._buf):
            self._buf = np.concatenate([self._buf, np.zeros(end - len(self._buf), np.float32)])
        self._buf[start:end] += samples
        if len(self._buf) > 2 * self.WINDOW_S * self.rate:
            self._flush(len(self._buf) - self.WINDOW_S * self.rate)

    def _flush(self, n: int) -> None:
        pcm = (np.clip(self._buf[:n], -1, 1) * 32767).astype("<i2").tobytes()
        self._base += n
        self._buf = self._buf[n:]
        try:
            while self._gap:
                step = min(self._gap, 1 << 20)
                self._write(bytes(2 * step))
                self._gap -= step
            self._write(pcm)
        except OSError as exc:
            try:
                self._raw.truncate(self._good)  # whole samples only, so later audio stays at its time
            except OSError:
                pass
            self._gap += len(pcm) // 2
            if self.error is None:
                why = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
                self.error = f"reply audio {self.path} stopped recording: {why}; it resumes once a write succeeds"
                log.error("%s", self.error)
            return
        if self.error is not None:
            log.warning("reply audio %s: writing again", self.path)
            self.error = None

    def _write(self, data: bytes) -> None:
        done = 0
        while done < len(data):
            k = self._raw.write(data[done:])
            if not k:
                raise OSError(errno.ENOSPC, "nothing could be written")
            done += k
        self._good += len(data)

    def close(self, end_ns: int | None = None) -> None:
        if self.closed:
            return
        self.closed = True
        if end_ns is not None:
            total = int(round(end_ns * self.rate / 1e9)) - self._base
            if total > len(self._buf):
                self._buf = np.concatenate([self._buf, np.zeros(total - len(self._buf), np.float32)])
        self._flush(len(self._buf))
        self._raw.close()
        pcm = np.fromfile(self.part, dtype="<i2")
        try:
            with open_private(self.path, "wb") as f:
                sf.write(f, pcm, self.rate, subtype="PCM_16", format=self.path.suffix.lstrip(".").upper())
        except (OSError, RuntimeError) as exc:  # soundfile reports a full disk as a RuntimeError
            log.error("reply audio %s could not be written (%s); the raw samples are kept in %s (16-bit, %d Hz)",
                      self.path, exc, self.part, self.rate)
            return
        self.part.unlink()


class DeviceSink:
    def __init__(self, device: str | int | None, rate: int = 24000) -> None:
        sd, _ = sound_device(device, "output")
        self.rate = rate
        self._stream = sd.OutputStream(device=device, channels=1, samplerate=rate, dtype="float32",
                                       latency="low")
        self._stream.start()

    def write(self, t_ns: int, samples: np.ndarray) -> None:
        self._stream.write(np.ascontiguousarray(samples.reshape(-1, 1), dtype=np.float32))

    def close(self, end_ns: int | None = None) -> None:
        self._stream.stop()
        self._stream.close()


class NullSink:
    def __init__(self, rate: int = 24000) -> None:
        self.rate = rate

    def write(self, t_ns: int, samples: np.ndarray) -> None:
        pass

    def close(self, end_ns: int | None = None) -> None:
        pass


def open_sink(spec: str | None, rate: int = 24000) -> AudioSink:
    if spec in (None, "", "null"):
        return NullSink(rate)
    if spec.lower().endswith((".wav", ".flac")):
        return TimelineWavSink(spec, rate)
    device: str | int | None = None if spec == "default" else (int(spec) if spec.isdigit() else spec)
    return DeviceSink(device, rate)
