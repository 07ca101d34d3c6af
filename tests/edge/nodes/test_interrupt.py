"""One path for an interrupt on both clocks: on the virtual clock the outcome does not depend on when it arrives."""
from __future__ import annotations

import time

import numpy as np
import pytest
import soundfile as sf

from edge import messages as m
from edge.graph.supervisor import Supervisor
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal, content
from edge.wire import decode

SCRIPT = ("0 speak This is a long answer that keeps going and going for quite a while, certainly longer than "
          "three seconds of speech.\n2 interrupt\n3 speak Sorry, go on.\n")


def session(d, speech_wav, relay_delay_s: float):
    """A virtual-clock session whose supervisor relays each Interrupt `relay_delay_s` late."""
    (d / "s.txt").write_text(SCRIPT)
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(d / "o.wav"), journal=str(d / "j"),
                        frontend=f"scripted:{d / 's.txt'}", voice="espeak", realtime=False)
    relay = Supervisor._on_control

    def late(self, frames):
        if decode(frames[1:]).type == "interrupt":
            time.sleep(relay_delay_s)  # the new epoch's data reaches every node first
        relay(self, frames)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Supervisor, "_on_control", late)
        assert run_session(cfg, inprocess=True).ok
    audio, rate = sf.read(str(d / "o.wav"), dtype="int16")
    return Journal(d / "j"), audio, rate


def test_a_late_interrupt_cuts_at_the_same_sample_and_replays_the_same(tmp_path, speech_wav):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ja, a, rate = session(tmp_path / "a", speech_wav, 0.0)
    jb, b, _ = session(tmp_path / "b", speech_wav, 0.8)
    assert content(ja) == content(jb)
    assert np.array_equal(a, b)
    # Speaking from 1 s, cut at the decision ending chunk 2 (3 s), the new reply from 4 s.
    level = lambda t0, t1: float(np.abs(a[int(t0 * rate):int(t1 * rate)]).max())  # noqa: E731
    assert level(1.2, 2.9) > 300 and level(3.05, 3.95) == 0 and level(4.05, 5.0) > 300
    cut = [msg for _, msg in ja.messages(m.ChunkDecision) if msg.interrupt]
    assert [d.index for d in cut] == [2]
