"""A skill result carrying terminal controls (ESC, BEL, NUL) is printed as plain text in the session summary."""
from __future__ import annotations

import re

from edge import messages as m
from edge.graph.supervisor import SessionReport
from edge.timeline.journal import JournalWriter
from edge.timeline.summary import print_summary
from edge.wire import encode

HOSTILE = "Done.\x1b]0;pwned\x07\x1b[2J\x1b[H\x00 Paris is \x9b31msunny\r\x7f.\tok"


def test_the_summary_strips_control_characters_from_session_text(tmp_path, capsys):
    path = tmp_path / "s.journal"
    w = JournalWriter(path, {"kind": "venus-edge-session", "config": {}})
    results = [(m.BackendResult(id="r", work_id="w", text=HOSTILE), "harness"),
               (m.SpeakText(id="s", utterance=1, index=0, text="Here: " + HOSTILE), "frontend")]
    for i, (msg, src) in enumerate(results):
        w.append(i, encode(msg, seq=i, epoch=0, t_ns=i, src=src))
    w.close()
    print_summary(str(path), SessionReport(True, "completed", 1.0, {}, [], {}), None)
    out = capsys.readouterr().out
    assert "Paris is" in out and "sunny" in out and "\tok" in out  # the words stay
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), repr(out)
