"""The embedded default through the real graph in real time: a turn that ends inside a chunk is answered at the
very next boundary with the words made before it, as `bench voice` reads it from the journal."""
from __future__ import annotations

import numpy as np
import pytest

from edge import messages as m
from edge.bench import spoken
from edge.graph.supervisor import SupervisorSettings
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

pytestmark = pytest.mark.slow
QUESTION = "What is the capital of France?"


def _ending_at(text: str, at_s: float, total_s: float) -> tuple[np.ndarray, float]:
    """`text` placed so that it ends `at_s` into a 1 s chunk (after a second of quiet); the audio and its end."""
    _, marks = spoken.timeline([(1.2, text)], total_s)
    start = 1.2 + (at_s - marks[0]["end_s"]) % 1.0
    audio, marks = spoken.timeline([(start, text)], total_s)
    return audio, marks[0]["end_s"]


def speaks_at(journal: Journal, speak_id: str) -> int:
    return next(rec.env.t_ns for rec, msg in journal.messages(m.SpeakText) if msg.id == speak_id)


def test_a_question_ending_inside_a_chunk_is_answered_at_its_boundary_with_words_made_before_it(tmp_path):
    from edge.bench.voice import Turn, read_turns

    audio, end_s = _ending_at(QUESTION, 0.1, 9.0)
    mic = spoken.write(tmp_path / "in.wav", audio)
    cfg = SessionConfig(mic=str(mic), speaker=str(tmp_path / "reply.wav"), journal=str(tmp_path / "s.journal"),
                        chunk_ms=1000, realtime=True, frontend="default", voice="piper", threads=1,
                        speaker_rate=16000, extra={"max_reply_tokens": 32})
    report = run_session(cfg, settings=SupervisorSettings(hang_s=60.0))
    assert report.ok, report.reason
    journal = Journal(tmp_path / "s.journal")
    drafts = [(rec.env.t_ns, msg) for rec, msg in journal.messages(m.DraftAhead)]
    decided = [(rec.env.t_ns, msg) for rec, msg in journal.messages(m.ChunkDecision) if msg.user_text]
    speaks = [msg for _, msg in journal.messages(m.SpeakText)]
    assert drafts and decided and speaks, (drafts, decided, speaks)
    # The turn's draft (the reply's later pieces also go to the voice ahead, with no user end).
    sent_ns, draft = [(t, d) for t, d in drafts if d.user_end_ns >= 0][-1]
    _, decision = decided[0]
    boundary_ns = (decision.index + 1) * 1_000_000_000
    # Heard "France?" and made the first words from the audio of the chunk where the question ended (before
    # its boundary; how soon they are ready depends on the machine): that boundary says them.
    assert draft.index == int(end_s) == decision.index and "france" in draft.heard.lower()
    assert draft.t_ns < boundary_ns and sent_ns < speaks_at(journal, speaks[0].id)
    assert decision.user_text == draft.heard and decision.text == draft.text == speaks[0].text
    assert decision.info.get("asr_reused") and decision.info["drafted_ahead"]["t_ns"] == draft.t_ns
    # bench voice reads the same from the journal.
    turn = Turn(QUESTION, int(end_s * 1e9))
    read_turns(tmp_path / "s.journal", [turn])
    assert turn.drafted_ahead and turn.ahead_text == turn.first_text and turn.latency_ms is not None
