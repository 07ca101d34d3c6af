"""Live, a result that completes between two idle boundaries goes to the frontend at once, not a chunk later."""
from __future__ import annotations

import json

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal


def quick_skill(root) -> None:
    d = root / "quick"
    d.mkdir(parents=True)
    (d / "skill.json").write_text(json.dumps({
        "name": "quick", "version": "1.0", "description": "Answers after a fifth of a second.",
        "arguments": {"type": "object"}, "entry": {"python": "skill.py:run"}}))
    (d / "skill.py").write_text("import time\ndef run(arguments, context):\n    time.sleep(0.2)\n"
                                "    return 'The answer is 42.'\n")


def released_after_completion(tmp_path) -> tuple[float, list[int], int]:
    """(seconds from completion to release, decision stamps, release stamp) of one delegated request."""
    sf.write(str(tmp_path / "in.wav"), np.zeros(16000 * 6, np.float32), 16000)
    (tmp_path / "script.txt").write_text("1 delegate What is the answer?\n")
    quick_skill(tmp_path / "skills")
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker="null", journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{tmp_path / 'script.txt'}", voice="null", realtime=True,
                        extra={"harness": {"dir": str(tmp_path / "h"), "skills": str(tmp_path / "skills"),
                                           "router": {"scripted": {"rules": [{"match": ".", "capability": "quick",
                                                                              "arguments": {}}]}}}})
    assert run_session(cfg, inprocess=True).ok
    journal = Journal(tmp_path / "s.journal")
    [done] = [rec.env.t_ns for rec, ev in journal.messages(m.WorkEvent) if ev.state == "completed"]
    [released] = [rec.env.t_ns for rec, _ in journal.messages(m.BackendResult)]
    decisions = [rec.env.t_ns for rec, _ in journal.messages(m.ChunkDecision)]
    return (released - done) / 1e9, decisions, released


def test_a_result_completed_between_boundaries_is_released_at_once(tmp_path):
    wait, decisions, released = released_after_completion(tmp_path)
    assert wait < 0.3, f"released {wait:.2f} s after it completed"
    assert released not in decisions  # not held for the next chunk boundary

