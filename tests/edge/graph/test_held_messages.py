"""A reliable message its receiver holds (speech playing the words) is not re-sent while the receiver lives:
each re-send woke every receiver and the recorder again. Once the holder's life ends it is re-sent as before.
An acknowledgement goes only to the node it answers."""
from __future__ import annotations

import collections

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.graph import reliable
from edge.clock import VirtualClock
from edge.graph.node import NodeIO
from edge.graph.reliable import Outbox
from edge.graph.supervisor import SupervisorSettings
from edge.session import ALL_NODES, SessionConfig, make_supervisor, nodes_for
from edge.timeline.journal import Journal
from edge.wire import topics_for


def test_a_held_message_waits_for_its_final_ack_or_the_end_of_its_holders_life(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(reliable.time, "monotonic", lambda: clock[0])
    box = Outbox(resend_s=0.25, max_resend_s=2.0)
    box.add("a", [b"a"])
    box.add("b", [b"b"])
    box.held("a", "speech")
    clock[0] += 3.0
    assert box.due() == [[b"b"]]  # b has no holder: re-sent on its schedule
    clock[0] += 1.5
    assert box.due() == [[b"b"]]
    box.holder_gone("speech")  # speech restarts: its next life must get a
    clock[0] += 0.3
    assert box.due() == [[b"a"]]
    box.held("a", "speech")
    assert box.ack("a") and box.pending() == [("b", [b"b"])]
    box.held("a", "speech")  # a late copy of the first Ack changes nothing
    assert len(box) == 1


def test_words_being_played_are_sent_once(tmp_path):
    wav = tmp_path / "noise.wav"
    sf.write(str(wav), (np.random.default_rng(0).standard_normal(32000) * 0.01).astype(np.float32), 16000)
    script = tmp_path / "script.txt"
    script.write_text("".join(f"{k} speak ok.\n" for k in range(20)))
    cfg = SessionConfig(mic=str(wav), speaker="null", journal=str(tmp_path / "s.journal"), chunk_ms=100, pace=4.0,
                        frontend=f"scripted:{script}", voice="null", realtime=True)
    report = make_supervisor(cfg, nodes_for(cfg), settings=SupervisorSettings(bus="direct")).run()
    assert report.ok, report.reason
    sends = collections.Counter(rec.env.msg.id for rec in Journal(tmp_path / "s.journal").records()
                                if isinstance(rec.env.msg, m.SpeakText))
    played = {msg.speak_id for _, msg in Journal(tmp_path / "s.journal").messages(m.PlaybackAck) if msg.last}
    # Speech plays 20 replies one after another (seconds), holding each until played: each used to be sent again
    # every 0.25-2 s meanwhile. Now only one whose held Ack was slower than the first re-send may come twice.
    assert len(sends) == 20 and played == set(sends)
    assert sum(sends.values()) <= 22, f"{sum(sends.values())} sends of 20 replies"


class _Pub:
    def __init__(self) -> None:
        self.sent: list[list[bytes]] = []

    def send_multipart(self, frames, copy: bool = True) -> None:
        self.sent.append(list(frames))


def test_an_ack_wakes_only_the_node_it_answers():
    pub = _Pub()
    io = NodeIO("speech", pub, None, VirtualClock(), Outbox())  # type: ignore[arg-type]
    io.hold_ack("speak-1", m.SpeakText.TYPE, "frontend")
    io.release_ack("speak-1")
    io.ack("play-1", m.PlaybackAck.TYPE, "speech")
    assert [f[0] for f in pub.sent] == [b"ack.frontend", b"ack.speech"]
    # Each node hears only its own acknowledgements (every node used to wake for every Ack, on both paths).
    for node in ALL_NODES:
        assert [t for t in topics_for(node) if t.startswith("ack")] == [f"ack.{node}"]
