"""Live, a harness result that comes back between boundaries goes to the voice at once (DraftAhead), so its
words are already synthesized when the next boundary says them; on the virtual clock nothing goes ahead."""
from __future__ import annotations

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal
from skill_files import returning, route_all_to, write_skill

ANSWER = "The answer is 42."


def _session(tmp_path, realtime: bool) -> Journal:
    write_skill(tmp_path / "skills", "answer", returning(ANSWER))
    # A room above capture's noise gate, as a microphone hears it.
    sf.write(str(tmp_path / "in.wav"), 0.003 * np.random.default_rng(1).standard_normal(RATE * 5).astype(np.float32),
             RATE)
    (tmp_path / "script.txt").write_text("0 delegate What is the answer?\n")
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker="null", journal=str(tmp_path / "s.journal"),
                        chunk_ms=500, frontend=f"scripted:{tmp_path / 'script.txt'}", voice="null", realtime=realtime,
                        extra={"harness": {"dir": str(tmp_path / "harness"), "skills": str(tmp_path / "skills"),
                                           "router": route_all_to("answer")}})
    report = run_session(cfg, inprocess=True)
    assert report.ok, report.reason
    return Journal(cfg.journal)


def test_a_result_back_between_boundaries_is_handed_to_the_voice_before_the_boundary_that_says_it(tmp_path):
    j = _session(tmp_path, realtime=True)
    [(got_ns, result)] = [(rec.env.t_ns, r) for rec, r in j.messages(m.BackendResult) if r.text == ANSWER]
    [(said_ns, said)] = [(rec.env.t_ns, s) for rec, s in j.messages(m.SpeakText) if s.backend_id == result.id]
    ahead = [(rec.env.t_ns, a) for rec, a in j.messages(m.DraftAhead) if a.info.get("result") == result.id]
    assert ahead, "the result's words waited for the boundary to reach the voice"
    sent_ns, draft = ahead[0]
    assert draft.text == said.text == ANSWER
    # Sent as the result came, before the boundary that said it (the first it could be said at).
    assert got_ns <= sent_ns < said_ns and draft.index == said.index


def test_on_the_virtual_clock_a_result_goes_to_the_voice_only_when_said(tmp_path):
    j = _session(tmp_path, realtime=False)
    assert [s for _, s in j.messages(m.SpeakText) if s.text == ANSWER], "the result was not said"
    assert not list(j.messages(m.DraftAhead))
