"""Spoken test speech made with espeak-ng: single phrases, and scripted conversations on a timeline."""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

import numpy as np
import soundfile as sf

from edge.audio_format import RATE
from edge.backends.locate import espeak_binary
from kernels.resample import resample


def say(text: str, voice: str = "en-us", wpm: int = 165) -> np.ndarray:
    """`text` spoken by espeak-ng, as 16 kHz mono float32."""
    wav = subprocess.run([espeak_binary(), "-v", voice, "-s", str(wpm), "--stdout", "--", text],
                         check=True, capture_output=True, timeout=60).stdout
    audio, rate = sf.read(io.BytesIO(wav), dtype="float32")
    audio = resample(audio, rate, RATE).astype(np.float32)
    voiced = np.flatnonzero(np.abs(audio) > 1e-3)  # espeak pads with silence: trim it, timing is ours
    return audio[voiced[0]:voiced[-1] + 1] if len(voiced) else audio


def timeline(lines: list[tuple[float, str]], total_s: float, voice: str = "en-us") -> tuple[np.ndarray, list[dict]]:
    """Phrases placed at given start times; returns the audio and each phrase's [start, end] in seconds."""
    audio = np.zeros(int(total_s * RATE), np.float32)
    marks = []
    for start, text in lines:
        clip = say(text, voice)
        i = int(start * RATE)
        if i + len(clip) > len(audio):
            raise ValueError(f"{text!r} at {start} s does not fit in {total_s} s")
        audio[i:i + len(clip)] += 0.8 * clip
        marks.append({"text": text, "start_s": start, "end_s": start + len(clip) / RATE})
    return audio, marks


def write(path: str | Path, audio: np.ndarray) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), audio, RATE, subtype="PCM_16")
    return path
