"""The two speech recognizers: tiny.en (the default) and base, assembled from its two packages."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf

from edge.detect.asr import Transcriber, model_dir
from edge.backends.locate import whisper_base_dir
from kernels.resample import resample

from models_helpers import normalize


def spoken(tmp_path, text: str, voice: str, wpm: int) -> np.ndarray:
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is needed (apt-get install espeak-ng)")
    wav = tmp_path / "said.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-w", str(wav), text], check=True, capture_output=True)
    x, rate = sf.read(str(wav), dtype="float32")
    return resample(x, rate, 16000)


def test_an_unknown_recognizer_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="tiny.en, base"):
        model_dir("large")


def test_base_is_assembled_once_with_its_tokenizer_beside_it(tmp_path):
    folder = whisper_base_dir(tmp_path)
    assert {p.name for p in folder.iterdir()} >= {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"}
    stamp = (folder / "model.bin").stat().st_mtime_ns
    assert whisper_base_dir(tmp_path) == folder and (folder / "model.bin").stat().st_mtime_ns == stamp


def test_base_hears_the_name_a_user_calls(tmp_path, monkeypatch):
    # The barge-in policy keeps talking when the user turns to someone else: that needs the name heard.
    monkeypatch.setenv("VENUS_EDGE_CACHE", str(tmp_path))
    text = normalize(Transcriber(1, "base").transcribe(
        spoken(tmp_path, "Mom, I will call you back in five minutes, okay?", "en-us", 170))).split()
    assert "mom" in text and "call" in text, text
