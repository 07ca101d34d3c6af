"""An answer already handed to the frontend, but not yet spoken, is dropped once the user asks something new,
or says "stop".

The harness releases a general answer at an idle boundary while the user is talking (the frontend holds it
for the end of the user's turn); the user's turn turns out to be a new question, so the held answer to the
earlier one is stale: the frontend drops it, the journal says why, and it is never spoken. A turn that is only
"Stop." cuts the request short the same way: the harness gives its work up and the held answer stays unsaid.
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
STOPPED = "the user said stop before it was said"


def _held(tmp_path, answer: str, request: str, last: str, harness: dict) -> tuple[Journal, str, str]:
    """A session where `answer` to `request` is released while the user talks, and the user's turn ends with
    `last` at 7 s; the journal, the request's id and the released result's id."""
    write_skill(tmp_path / "skills", "chat", returning(answer), "Talks about anything.")
    sf.write(str(tmp_path / "in.wav"), np.zeros(8 * RATE, np.float32), RATE)
    talk = "".join(f"{i} talk\n" for i in range(1, 13))  # the user talks from 0.5 s to 6.5 s ...
    (tmp_path / "script.txt").write_text(f"0 delegate {request}\n{talk}13 hear {last}\n")
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker="null", journal=str(tmp_path / "s.journal"),
                        chunk_ms=500, frontend=f"scripted:{tmp_path / 'script.txt'}", voice="null", realtime=True,
                        extra={"harness": {"skills": str(tmp_path / "skills"), "router": route_all_to("chat"),
                                           **harness}})
    report = run_session(cfg)
    assert report.ok, report.reason
    j = Journal(cfg.journal)
    [asked] = [r for _, r in j.messages(m.DelegateRequest)]
    released = [r for _, r in j.messages(m.BackendResult) if r.work_id == asked.id and r.kind == "result"]
    assert released, "the answer was not released while the user talked (a very slow skill start?)"
    assert not [s for _, s in j.messages(m.SpeakText) if s.backend_id == released[0].id], "the held answer was said"
    return j, asked.id, released[0].id


def _dropped(j: Journal) -> dict[str, str]:
    return {k: v for _, d in j.messages(m.ChunkDecision) for k, v in d.info.get("dropped_results", {}).items()}


def test_a_held_general_answer_is_dropped_when_a_new_question_comes(tmp_path):
    j, request, result = _held(tmp_path, "Rome was founded long ago.", "Tell me about Rome.", "What time is it?",
                               {"stale_after_turn": ["chat"]})
    [released] = [r for _, r in j.messages(m.BackendResult) if r.id == result]
    [asked] = [r for _, r in j.messages(m.DelegateRequest)]
    assert released.asked_ns == asked.opened_ns  # a general answer: a new question makes it stale
    # ... and says "What time is it?" at 7 s: the frontend drops the answer it held, and journals why.
    assert _dropped(j) == {result: STALE}
    events = [(w.state, w.detail) for _, w in j.messages(m.WorkEvent) if w.work_id == request]
    assert events[-1] == ("cancelled", STALE), events  # the harness gives the work up by the same rule


def test_a_held_answer_is_dropped_when_the_user_says_stop(tmp_path):
    # Any request, not only one a new question makes stale: "Stop." gives the request it cut short up.
    j, _, result = _held(tmp_path, "Paris has a river called the Seine.", "Tell me about Paris.", "Stop.", {})
    assert _dropped(j) == {result: STOPPED}
