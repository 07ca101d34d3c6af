"""The word "stop" gives up the work of the request it cut short, through the whole graph: the user says "Stop." over
the holding phrase while the assistant still looks something up, and that answer is never said.
(That a reply the user cut is not offered again is tested on the harness: tests/edge/harness/test_harness_cut.py.)
"""
from __future__ import annotations

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.harness.returns import STOPPED
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal
from skill_files import route_all_to, write_skill

def session(tmp_path, script: str, body: str) -> Journal:
    write_skill(tmp_path / "skills", "lookup", body, "Looks things up.")
    sf.write(str(tmp_path / "in.wav"), np.zeros(12 * RATE, np.float32), RATE)
    (tmp_path / "script.txt").write_text(script)
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        chunk_ms=1000, frontend=f"scripted:{tmp_path / 'script.txt'}", voice="espeak",
                        realtime=False, extra={"harness": {"skills": str(tmp_path / "skills"),
                                                           "router": route_all_to("lookup")}})
    report = run_session(cfg)
    assert report.ok, report.reason
    return Journal(cfg.journal)


SLOW = "import time\n\ndef run(arguments, context):\n    time.sleep(4)\n    return 'It will rain in Paris.'\n"


def test_stop_gives_up_the_work_of_the_request_it_cut_short(tmp_path):
    j = session(tmp_path, "0 delegate What is the weather in Paris?\n0 speak One moment, I will look that up.\n"
                          "1 interrupt\n1 hear Stop.\n", SLOW)
    [request] = [r for _, r in j.messages(m.DelegateRequest)]
    said = [s.text for _, s in j.messages(m.SpeakText) if s.backend_id.startswith(request.id)]
    assert not said, f"the answer to a request the user stopped was said: {said}"
    events = [(w.state, w.detail) for _, w in j.messages(m.WorkEvent) if w.work_id == request.id]
    assert ("cancelling", STOPPED) in events or ("cancelled", STOPPED) in events, events
