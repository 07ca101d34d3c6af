"""The README's main command on a spoken question that ends with the file: the delegated answer is still said.

`venus-edge --mic q.wav --speaker out.wav` with the embedded default, on the real clock: the question is
decided at the file's last chunk boundary and its answer comes from the harness after it, so the session
listens on to a quiet room until the answer has been spoken.
"""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.timeline.journal import Journal
from kernels.resample import resample

from models_helpers import normalize

pytestmark = pytest.mark.slow


def test_a_question_at_the_files_end_is_answered_aloud(tmp_path, transcriber):
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is needed (apt-get install espeak-ng)")
    raw = tmp_path / "raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-gb+m3", "-w", str(raw), "How much is twelve times eight?"], check=True)
    x, rate = sf.read(str(raw), dtype="float32")
    sf.write(str(tmp_path / "q.wav"), resample(x, rate, RATE), RATE)  # ends right after the question
    file_s = len(x) / rate
    done = subprocess.run([sys.executable, "-m", "edge.cli", "--mic", str(tmp_path / "q.wav"), "--speaker",
                           str(tmp_path / "out.wav"), "--journal", str(tmp_path / "s.journal"), "--threads", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "unanswered" not in done.stderr
    j = Journal(tmp_path / "s.journal")
    answer = [s for _, s in j.messages(m.SpeakText) if s.backend_id and "96" in s.text]
    assert answer, [s.text for _, s in j.messages(m.SpeakText)]
    assert any(a.speak_id == answer[0].id and a.last for _, a in j.messages(m.PlaybackAck))  # played to its end
    reply, out_rate = sf.read(str(tmp_path / "out.wav"), dtype="float32")
    after = resample(reply[int(file_s * out_rate):], out_rate, RATE)  # what was said once the file had ended
    said = " ".join(normalize(transcriber.transcribe(after)).split())
    assert "ninety six" in said or "nine six" in said, said
