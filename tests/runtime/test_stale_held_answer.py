"""An answer already handed to the frontend, but not yet spoken, is dropped once the user asks something new.

The harness releases a general answer at an idle boundary while the user is talking (the frontend holds it
for the end of the user's turn); the user's turn turns out to be a new question, so the held answer to the
earlier one is stale: the frontend drops it, the journal says why, and it is never spoken.
"""
from __future__ import annotations


import numpy as np
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal
from skill_files import returning, route_all_to, write_skill

STALE = "stale: the user asked something new before it was spoken"


def test_a_held_general_answer_is_dropped_when_a_new_question_comes(tmp_path):
    write_skill(tmp_path / "skills", "chat", returning("Rome was founded long ago."), "Talks about anything.")
    sf.write(str(tmp_path / "in.wav"), np.zeros(8 * RATE, np.float32), RATE)
    talk = "".join(f"{i} talk\n" for i in range(1, 13))  # the user talks from 0.5 s to 6.5 s ...
    (tmp_path / "script.txt").write_text(f"0 delegate Tell me about Rome.\n{talk}13 hear What time is it?\n")
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker="null", journal=str(tmp_path / "s.journal"),
                        chunk_ms=500, frontend=f"scripted:{tmp_path / 'script.txt'}", voice="null", realtime=True,
                        extra={"harness": {"skills": str(tmp_path / "skills"), "stale_after_turn": ["chat"],
                                           "router": route_all_to("chat")}})
    report = run_session(cfg)
    assert report.ok, report.reason
    j = Journal(cfg.journal)
    [request] = [r for _, r in j.messages(m.DelegateRequest)]
    released = [r for _, r in j.messages(m.BackendResult) if r.work_id == request.id and r.kind == "result"]
    assert released, "the answer was not released while the user talked (a very slow skill start?)"
    assert released[0].asked_ns == request.opened_ns  # a general answer: a new question makes it stale
    assert not [s for _, s in j.messages(m.SpeakText) if s.backend_id == released[0].id], "the stale answer was said"
    # ... and says "What time is it?" at 7 s: the frontend drops the answer it held, and journals why.
    dropped = {k: v for _, d in j.messages(m.ChunkDecision) for k, v in d.info.get("dropped_results", {}).items()}
    assert dropped == {released[0].id: STALE}
    events = [(w.state, w.detail) for _, w in j.messages(m.WorkEvent) if w.work_id == request.id]
    assert events[-1] == ("cancelled", STALE), events  # the harness gives the work up by the same rule
