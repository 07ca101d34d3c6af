"""Supervision: slow start, a hung node, a killed node; the session goes on and completes."""
from __future__ import annotations

import os
import signal
import threading
import time
import wave

from edge import messages as m
from edge.graph.supervisor import SupervisorSettings
from edge.session import ALL_NODES, SessionConfig, make_supervisor
from edge.timeline.journal import Journal


def config(tmp_path, wav, script, realtime=True):
    return SessionConfig(mic=str(wav), speaker=str(tmp_path / "o.wav"), journal=str(tmp_path / "s.journal"),
                         frontend=f"scripted:{script}", voice="espeak", realtime=realtime).as_dict()


def longer(wav, seconds, out):
    """The input followed by silence, `seconds` long in all (room for a restart before the input ends)."""
    with wave.open(str(wav)) as w:
        params, frames = w.getparams(), w.readframes(w.getnframes())
    pad = int(seconds * params.framerate) * params.sampwidth - len(frames)
    with wave.open(str(out), "wb") as w:
        w.setparams(params)
        w.writeframes(frames + b"\0" * max(0, pad))
    return out


def events(report, node, event):
    return [e for e in report.events if e["node"] == node and e["event"] == event]


def test_slow_start_is_waited_for(tmp_path, speech_wav, script, faulty_path, monkeypatch):
    monkeypatch.setenv("SLOW_START_S", "1.5")
    sup = make_supervisor(config(tmp_path, speech_wav, script, realtime=False), ALL_NODES,
                     settings=SupervisorSettings(handshake_timeout_s=10),
                     node_classes={"speech": "faulty_nodes:SlowStartSpeech"})
    report = sup.run()
    assert report.ok, report.reason
    assert report.restarts["speech"] == 0


def test_start_past_the_handshake_timeout_is_restarted_then_given_up(tmp_path, speech_wav, script, faulty_path,
                                                                   monkeypatch):
    monkeypatch.setenv("SLOW_START_S", "5")
    sup = make_supervisor(config(tmp_path, speech_wav, script, realtime=False), ALL_NODES,
                     settings=SupervisorSettings(handshake_timeout_s=0.8, max_restarts=2, backoff_s=0.01),
                     node_classes={"speech": "faulty_nodes:SlowStartSpeech"})
    report = sup.run()
    assert not report.ok
    assert len(events(report, "speech", "handshake-timeout")) == 2
    assert "speech" in report.reason


def test_hung_node_is_killed_and_restarted(tmp_path, speech_wav, script, faulty_path):
    cfg = {**config(tmp_path, speech_wav, script), "frontend_busy_s": 1.0}
    sup = make_supervisor(cfg, ALL_NODES, settings=SupervisorSettings(hang_s=1.5, heartbeat_s=0.2),
                     node_classes={"frontend": "faulty_nodes:HangOnceFrontend"})
    report = sup.run()
    assert report.ok, report.reason
    assert report.restarts["frontend"] == 1
    assert events(report, "frontend", "hung")


def test_sigkill_mid_session_node_back_within_2s_and_session_completes(tmp_path, speech_wav, script):
    sup = make_supervisor(config(tmp_path, speech_wav, script), ALL_NODES)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("report", sup.run()))
    t.start()
    deadline = time.monotonic() + 30
    while not (sup.started and sup.children["speech"].state == "running") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2.5)  # mid-session: the first reply is playing
    os.kill(sup.children["speech"].pid, signal.SIGKILL)
    t.join(60)
    report = result["report"]
    assert report.ok, report.reason
    assert report.restarts["speech"] == 1
    crashed = events(report, "speech", "crashed")[0]["t_s"]
    ready = [e["t_s"] for e in events(report, "speech", "ready") if e["t_s"] > crashed][0]
    assert ready - crashed < 2.0
    journal = Journal(tmp_path / "s.journal")
    assert [msg.node for _, msg in journal.messages(m.NodeEvent) if msg.event == "crashed"] == ["speech"]
    # The reply spoken after the restart is still played and acknowledged.
    acks = [msg for _, msg in journal.messages(m.PlaybackAck)]
    assert any(a.utterance == 2 for a in acks)


def test_a_blocked_short_handler_is_caught_within_2s_and_the_session_goes_on(tmp_path, speech_wav, script,
                                                                             faulty_path, monkeypatch):
    mark = tmp_path / "blocked_at"
    monkeypatch.setenv("HANG_MARK", str(mark))
    wav = longer(speech_wav, 14, tmp_path / "in.wav")  # the restarted harness has time to take the request
    sup = make_supervisor(config(tmp_path, wav, script), ALL_NODES,
                          node_classes={"harness": "faulty_nodes:HangOnceHarness"})
    report = sup.run()  # the supervisor's own settings: nothing loosened or tightened for the test
    assert report.ok, report.reason
    assert report.restarts == {"recorder": 0, "capture": 0, "frontend": 0, "speech": 0, "harness": 1}
    hung = events(report, "harness", "hung")
    assert len(hung) == 1
    caught_s = (hung[0]["t_s"] * 1e9 + sup.origin_ns - int(mark.read_text())) / 1e9
    assert 0 < caught_s < 2.0
    journal = Journal(tmp_path / "s.journal")
    said = [msg.detail for _, msg in journal.messages(m.NodeEvent) if msg.node == "harness" and msg.event == "hung"]
    assert len(said) == 1 and said[0].startswith("node harness hung: no heartbeat for ")
    assert said[0].count(". ") == 0  # one sentence
    # The request the blocked life never acknowledged is re-sent and taken by the next life.
    delegated = [msg.id for _, msg in journal.messages(m.DelegateRequest)]
    queued = {msg.work_id for _, msg in journal.messages(m.WorkEvent) if msg.state == "queued"}
    assert delegated and set(delegated) <= queued
    # Speech went on meanwhile: both scripted replies were played.
    assert {a.utterance for _, a in journal.messages(m.PlaybackAck)} >= {1, 2}


def test_a_long_model_step_within_its_declared_bound_is_not_called_hung(tmp_path, speech_wav, script, faulty_path,
                                                                        monkeypatch):
    monkeypatch.setenv("SLOW_STEP_S", "3")
    sup = make_supervisor(config(tmp_path, speech_wav, script), ALL_NODES,
                          node_classes={"frontend": "faulty_nodes:SlowStepFrontend"})
    report = sup.run()
    assert report.ok, report.reason
    assert report.restarts["frontend"] == 0
    assert not events(report, "frontend", "hung")
