"""A harness result is heard exactly once even when a node is killed at a step of the result's life.

The steps and who dies there: released (the harness, before the frontend's acknowledgement comes back), arrived
(the frontend, acknowledged and not yet spoken), speaking (the speech node, 0.3 s into the request), played (the
speech node, after the reply's last piece) and acked (the frontend, after telling the harness it was delivered).
Each node acknowledges only once the result is durably recorded (the harness's store, the frontend's step file)
or its work is done (the speech node, once the reply has played).
"""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from edge import messages as m
from edge.session import ALL_NODES, SessionConfig, make_supervisor
from edge.timeline.journal import Journal
from skill_files import returning, route_all_to, write_skill

ANSWER = "It is twelve degrees and cloudy in Paris. The wind comes from the west. Tomorrow will be sunny."


# The input file's length. After a file the session listens on to a quiet room until the result is delivered
# (edge/nodes/capture_tail.py), so a node killed before the delivery dies, restarts and finishes inside a short
# one; a node killed at or after it ("played", "acked") needs the file to run on past it, or the session ends
# before its death and no restart is seen.
SHORT_S, PAST_DELIVERY_S = 4, 16


@pytest.mark.parametrize("node,cls,file_s", [("harness", "faulty_nodes:KilledAfterReleaseHarness", SHORT_S),
                                             ("frontend", "faulty_nodes:KilledAfterResultFrontend", SHORT_S),
                                             ("speech", "faulty_nodes:KilledWhileSpeakingSpeech", SHORT_S),
                                             ("speech", "faulty_nodes:KilledAfterPlayedSpeech", PAST_DELIVERY_S),
                                             ("frontend", "faulty_nodes:KilledAfterDeliveredFrontend",
                                              PAST_DELIVERY_S)],
                         ids=["released", "arrived", "speaking", "played", "acked"])
def test_a_result_is_heard_exactly_once_when_a_node_dies_with_it(tmp_path, faulty_path, monkeypatch, node, cls,
                                                                 file_s):
    monkeypatch.setenv("KILL_MARK", str(tmp_path / "killed"))
    sf.write(tmp_path / "in.wav", np.zeros(16000 * file_s, np.float32), 16000)
    (tmp_path / "script.txt").write_text("1 delegate What is the weather in Paris?\n")
    write_skill(tmp_path / "skills", "answer", returning(ANSWER))
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker=str(tmp_path / "out.wav"),
                        journal=str(tmp_path / "s.journal"), frontend=f"scripted:{tmp_path / 'script.txt'}",
                        voice="espeak", chunk_ms=500, realtime=True,
                        extra={"harness": {"skills": str(tmp_path / "skills"), "router": route_all_to("answer")}})
    report = make_supervisor(cfg.as_dict(), ALL_NODES, node_classes={node: cls}).run()
    assert report.ok, report.reason
    assert (tmp_path / "killed").exists() and report.restarts[node] == 1  # it really died with the result

    journal = Journal(tmp_path / "s.journal")
    results = [r for _, r in journal.messages(m.BackendResult) if r.kind == "result"]
    assert len({r.work_id for r in results}) == 1
    if node != "harness":  # released once: not saved by the harness offering it again later
        assert len({r.id for r in results}) == 1
    work_id = results[0].work_id
    played = [a for _, a in journal.messages(m.PlaybackAck) if a.backend_id in {r.id for r in results}]
    pieces = [(a.speak_id, a.seq) for a in played]
    assert len(pieces) == len(set(pieces)), pieces  # no piece heard twice
    assert len({a.speak_id for a in played if a.last}) == 1  # one reply, heard to its end
    delivered = [e for _, e in journal.messages(m.WorkEvent) if e.work_id == work_id and e.state == "delivered"]
    assert len(delivered) == 1
