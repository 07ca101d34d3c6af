"""A held answer stays cut when the user says "stop" before it is spoken.

The harness releases a general answer while the user is talking (the frontend holds it for the end of the
user's turn); the user's turn is only "Stop.": the harness gives the request's work up, and the frontend drops
the answer it holds instead of saying it once the user is quiet.
"""
from __future__ import annotations

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal
from skill_files import returning, route_all_to, write_skill

STOPPED = "the user said stop before it was said"


def test_a_held_answer_is_dropped_when_the_user_says_stop(tmp_path):
    write_skill(tmp_path / "skills", "chat", returning("Paris has a river called the Seine."), "Talks.")
    sf.write(str(tmp_path / "in.wav"), np.zeros(8 * RATE, np.float32), RATE)
    talk = "".join(f"{i} talk\n" for i in range(1, 13))  # the user talks from 0.5 s to 6.5 s ...
    (tmp_path / "script.txt").write_text(f"0 delegate Tell me about Paris.\n{talk}13 hear Stop.\n")
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker="null", journal=str(tmp_path / "s.journal"),
                        chunk_ms=500, frontend=f"scripted:{tmp_path / 'script.txt'}", voice="null", realtime=True,
                        extra={"harness": {"skills": str(tmp_path / "skills"), "router": route_all_to("chat")}})
    report = run_session(cfg)
    assert report.ok, report.reason
    j = Journal(cfg.journal)
    [request] = [r for _, r in j.messages(m.DelegateRequest)]
    released = [r for _, r in j.messages(m.BackendResult) if r.work_id == request.id and r.kind == "result"]
    assert released, "the answer was not released while the user talked (a very slow skill start?)"
    # ... and says only "Stop." at 7 s: the answer the frontend held is never said, and the journal says why.
    assert not [s for _, s in j.messages(m.SpeakText) if s.backend_id == released[0].id], "a stopped answer was said"
    dropped = {k: v for _, d in j.messages(m.ChunkDecision) for k, v in d.info.get("dropped_results", {}).items()}
    assert dropped == {released[0].id: STOPPED}
