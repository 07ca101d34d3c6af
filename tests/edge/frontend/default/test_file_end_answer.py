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


def test_a_reply_that_opens_a_span_at_the_files_end_still_delegates_it(tmp_path):
    """The 0.5B model answers a weather question with "Okay." and a span it writes over the next chunks: the
    file ends first, so those chunks are the quiet room after it (virtual clock; a short wait)."""
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is needed (apt-get install espeak-ng)")
    raw = tmp_path / "raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-us+klatt2", "-w", str(raw), "What is the weather like in Paris today?"],
                   check=True)
    x, rate = sf.read(str(raw), dtype="float32")
    sf.write(str(tmp_path / "q.wav"), resample(x, rate, RATE), RATE)
    done = subprocess.run([sys.executable, "-m", "edge.cli", "--mic", str(tmp_path / "q.wav"), "--speaker", "null",
                           "--journal", str(tmp_path / "s.journal"), "--threads", "1", "--fast", "--answer-wait", "4"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    j = Journal(tmp_path / "s.journal")
    file_chunks = -(-len(x) // rate)
    requests = [r for _, r in j.messages(m.DelegateRequest)]
    assert requests and requests[0].index >= file_chunks - 1, "the span was never finished"
    spoken = [s for _, s in j.messages(m.SpeakText) if s.backend_id.startswith(requests[0].id)]
    named = [line for line in done.stderr.splitlines() if requests[0].instruction in line]
    assert spoken or (len(named) == 1 and "4 s" in named[0]), done.stderr  # answered, or named as unanswered
