"""The session summary tells a user's turn from words heard over the assistant's reply."""
from __future__ import annotations

from edge import messages as m
from edge.graph.supervisor import SessionReport
from edge.timeline.journal import JournalWriter
from edge.timeline.summary import print_summary
from edge.wire import encode


def test_words_heard_over_the_reply_are_marked_and_the_turn_is_not(tmp_path, capsys):
    path = tmp_path / "s.journal"
    w = JournalWriter(path, {"kind": "venus-edge-session", "config": {}})
    msgs = [m.ChunkDecision(index=3, control="speak", user_text="Could you set a timer for 15 seconds?"),
            m.ChunkDecision(index=7, control="listen", user_text="What?",
                            info={"barge_in": {"decision": "pending", "text": "What?"}}),
            m.ChunkDecision(index=11, control="speak", user_text="What's the capital of Peru?")]
    for i, msg in enumerate(msgs):
        w.append(i, encode(msg, seq=i, epoch=0, t_ns=i * 1_000_000_000, src="frontend"))
    w.close()
    print_summary(str(path), SessionReport(True, "completed", 1.0, {}, [], {}), None)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "user:" in ln]
    assert lines[0].endswith("Could you set a timer for 15 seconds?")
    assert lines[1].endswith("What?  (heard over the reply)")
    assert lines[2].endswith("What's the capital of Peru?")
