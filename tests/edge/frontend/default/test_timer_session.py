"""The README's main command with a spoken timer request: set at once, rung twenty seconds later, out loud.

`venus-edge --mic q.wav --speaker out.wav --journal s.journal --fast` with the embedded default: the rule
delegates the request (the 0.5B model never promises a timer), the harness's timer answers it at once, and
the file session listens on to a quiet room until the ring has been said.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import soundfile as sf

from edge import messages as m
from edge.bench import spoken
from edge.timeline.journal import Journal
from kernels.resample import resample

from models_helpers import normalize

pytestmark = pytest.mark.slow
SEC = 1_000_000_000


def test_a_spoken_timer_is_set_at_once_and_rings_when_due(tmp_path, transcriber):
    audio, _ = spoken.timeline([(0.3, "Set a timer for twenty seconds, please.")], 4.0)
    spoken.write(tmp_path / "q.wav", audio)
    done = subprocess.run([sys.executable, "-m", "edge.cli", "--mic", str(tmp_path / "q.wav"), "--speaker",
                           str(tmp_path / "out.wav"), "--journal", str(tmp_path / "s.journal"), "--threads", "1",
                           "--fast"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "unanswered" not in done.stderr and "not spoken" not in done.stderr
    j = Journal(tmp_path / "s.journal")
    [(t_request, request)] = [(rec.env.t_ns, r) for rec, r in j.messages(m.DelegateRequest)]
    assert "timer" in request.instruction.lower()
    said = [(rec.env.t_ns, s) for rec, s in j.messages(m.SpeakText) if s.text]
    assert [s.text for _, s in said] == ["Timer set for 20 seconds.", "Your 20-second timer is done."], \
        [s.text for _, s in said]  # the model said nothing of its own: no promise
    (t_ack, ack), (t_ring, ring) = said
    assert ack.backend_id.startswith(request.id + ":") and ring.backend_id.startswith(request.id + "-later:")
    # Due twenty seconds after it was set (not after the acknowledgement, which a busy machine may speak late);
    # said at the first chunk boundary once due.
    assert t_ack < t_ring and 19.5 * SEC <= t_ring - t_request <= 24 * SEC, (t_ring - t_request) / SEC
    for s in (ack, ring):
        assert any(a.speak_id == s.id and a.last for _, a in j.messages(m.PlaybackAck))  # played to its end
    reply, rate = sf.read(str(tmp_path / "out.wav"), dtype="float32")
    heard_ack, heard_ring = (" ".join(normalize(transcriber.transcribe(resample(part, rate, 16000))).split())
                             for part in (reply[:int(t_ring / SEC * rate)], reply[int(t_ring / SEC * rate):]))
    assert "timer" in heard_ack and ("twenty" in heard_ack or "two zero" in heard_ack), heard_ack
    assert "timer" in heard_ring and "done" in heard_ring, heard_ring
