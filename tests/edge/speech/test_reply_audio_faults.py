"""The reply WAV: private, and a full disk costs only the audio it could not hold (as silence), never the speech."""
from __future__ import annotations

import logging
import os
import stat

import numpy as np
import soundfile as sf

from edge.speech.sinks import TimelineWavSink
from filling_disk import FillingDisk


def test_a_full_disk_under_the_reply_wav_leaves_silence_in_place_and_recording_resumes(tmp_path, caplog):
    rate = 1000
    sink = TimelineWavSink(tmp_path / "out" / "reply.wav", rate)
    sink.WINDOW_S = 1
    disk = FillingDisk(sink._raw)
    sink._raw = disk
    tone = np.full(rate, 0.5, np.float32)
    sink.write(0, tone)
    sink._flush(len(sink._buf))  # second 0 on disk
    disk.full = True
    with caplog.at_level(logging.WARNING, logger="edge.speech.sinks"):
        for s in range(1, 4):  # seconds 1-3 while the disk is full: nothing raises
            sink.write(s * 10**9, tone)
            sink._flush(len(sink._buf))
    assert sum(r.levelno >= logging.ERROR for r in caplog.records) == 1 and "disk is full" in sink.error
    disk.full = False
    sink.write(4 * 10**9, tone)
    sink.close(5 * 10**9)
    pcm, sr = sf.read(tmp_path / "out" / "reply.wav")
    assert sr == rate and len(pcm) == 5 * rate  # every later sample still at its session time
    second = [float(np.abs(pcm[k * rate:(k + 1) * rate]).mean()) for k in range(5)]
    assert second[0] > 0.4 and second[1:4] == [0.0, 0.0, 0.0] and second[4] > 0.4
    assert stat.S_IMODE(os.stat(tmp_path / "out" / "reply.wav").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "out").st_mode) == 0o700
