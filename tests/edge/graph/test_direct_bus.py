"""The direct bus: one-hop node-to-node messages interleaved with proxy-only ones, each handled once and in
each sender's order, and every one of them in the journal in that order; the same on the proxy-only bus."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
import zmq

from edge import messages as m
from edge.graph.supervisor import Supervisor, SupervisorSettings
from edge.graph.two_paths import TwoPaths, first_seq
from edge.timeline.journal import Journal
from edge.wire import encode

from bus_nodes import CHUNKS, key
from repo_paths import SUPPORT

OUTSIDE_MESSAGES = 40  # an outside client's (a user interface's) messages: they only ever travel via the proxy


def _run(tmp: Path, bus: str, inprocess: bool) -> tuple[dict, dict, list, dict]:
    configs = {"recorder": {"journal": str(tmp / "s.journal"), "session": {}},
               "capture": {"out": str(tmp / "capture.json")}, "frontend": {"out": str(tmp / "frontend.json")}}
    nodes = {"recorder": "edge.nodes.recorder:RecorderNode", "capture": "bus_nodes:InterleavingCapture",
             "frontend": "bus_nodes:AnsweringFrontend"}
    sup = Supervisor(configs, nodes, required=("frontend",), inprocess=inprocess,
                     settings=SupervisorSettings(bus=bus, handshake_timeout_s=60.0))
    result = {}
    runner = threading.Thread(target=lambda: result.setdefault("report", sup.run()))
    runner.start()
    sent_outside = []
    deadline = time.monotonic() + 60
    while not sup.started and runner.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    pub = sup.ctx.socket(zmq.PUB)  # the supervisor's context: in-process the bus is inproc://
    pub.connect(sup.ep.bus_in)
    time.sleep(0.2)  # the proxy's subscriptions reach this publisher
    for i in range(OUTSIDE_MESSAGES):
        msg = m.CancelWork(f"ui-{i}", f"work-{i}")
        pub.send_multipart(encode(msg, seq=i, epoch=0, t_ns=0, src="ui"))
        sent_outside.append(msg.id)
        time.sleep(0.01)
    pub.close(linger=1000)
    runner.join(timeout=120)
    report = result["report"]
    assert report.ok, report.reason
    capture = json.loads((tmp / "capture.json").read_text())
    frontend = json.loads((tmp / "frontend.json").read_text())
    journal = [(rec.env.src, rec.env.seq, msg) for rec, msg in Journal(tmp / "s.journal").messages()]
    return capture, frontend, journal, {"outside": sent_outside, "stats": report.node_stats}


@pytest.fixture
def nodes_path(monkeypatch):
    """Node processes can import the test nodes (and this tree's edge package)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(SUPPORT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.syspath_prepend(str(SUPPORT))


@pytest.mark.parametrize("bus,inprocess", [("direct", False), ("proxy", False), ("direct", True)])
def test_interleaved_topics_arrive_once_in_order_and_are_journaled_in_order(tmp_path, nodes_path, bus, inprocess):
    capture, frontend, journal, extra = _run(tmp_path, bus, inprocess)
    # Each receiver handled every message meant for it exactly once, in its sender's order.
    assert len(capture["sent"]) == CHUNKS + CHUNKS // 3 + CHUNKS // 5 + 1  # chunks, activity, ducks, the end
    for_frontend = [k for k in capture["sent"] if k[0] in ("audio_chunk", "speech_activity", "duck", "end_of_input")]
    assert frontend["got"] == for_frontend
    assert frontend["sent"] == [["chunk_decision", i] for i in range(CHUNKS)]
    decisions = [k for k in capture["got"] if k[0] == "chunk_decision"]
    assert decisions == frontend["sent"]
    assert [k for k in capture["got"] if k[0] == "duck"] == [k for k in capture["sent"] if k[0] == "duck"]
    # The journal holds every message of every sender, in the order each sent them.
    by_src: dict[str, list] = {}
    for src, seq, msg in journal:
        by_src.setdefault(src, []).append((seq, msg))
    for src, items in by_src.items():
        seqs = [s for s, _ in items]
        assert seqs == sorted(seqs), f"the journal has {src}'s messages out of their sending order"
    assert [key(msg) for _, msg in by_src["capture"]] == capture["sent"]
    assert [key(msg) for _, msg in by_src["frontend"]] == frontend["sent"]
    assert [msg.id for _, msg in by_src["ui"]] == extra["outside"]
    # Causes before effects: each decision after its chunk, though the frontend may act on the chunk before the
    # recorder's copy of it has passed the proxy.
    place = {tuple(key(msg)): i for i, (_, _, msg) in enumerate(journal)}
    for i in range(CHUNKS):
        assert place["audio_chunk", i] < place["chunk_decision", i], f"decision {i} journaled before its chunk"
    recorder = extra["stats"]["recorder"]
    assert recorder["journaled_without_cause"] == 0
    events = [msg.event for _, msg in by_src["supervisor"] if isinstance(msg, m.NodeEvent)]
    assert "session-started" in events and events.count("finished") >= 2  # the supervisor's own, via the proxy
    # On the direct bus the frontend really took chunks from the one-hop path.
    paths = extra["stats"]["frontend"].get("paths")
    if bus == "direct":
        assert paths["direct"] > 0
    else:
        assert paths is None


def test_a_direct_copy_is_used_only_once_the_proxy_has_shown_the_path_complete():
    tp = TwoPaths()
    # Start-up: the direct path may have missed seq 0, so its copy of 1 waits for the proxy's.
    assert tp.accept("capture", 1, direct=True) is False
    assert tp.accept("capture", 0, direct=False) is True
    assert tp.accept("capture", 1, direct=False) is True  # the proxy's copy, matched with the early direct one
    # From now on the direct copy is handled and the proxy's dropped, even where the proxy's comes first: the
    # node may have taken other topics off the proxy, so only the direct path keeps the sender's order.
    assert tp.accept("capture", 2, direct=True) is True
    assert tp.accept("capture", 2, direct=False) is False
    assert tp.accept("capture", 3, direct=False) is False
    assert tp.accept("capture", 3, direct=True) is True
    assert tp.stats() == {"direct": 2, "second_copies": 2}


def test_the_direct_path_is_trusted_only_once_the_proxy_has_caught_up_with_it():
    tp = TwoPaths()
    assert not tp.accept("capture", 0, direct=True) and not tp.accept("capture", 1, direct=True)
    assert tp.accept("capture", 0, direct=False)  # 1 came early on the direct path and is not kept
    assert not tp.proven("capture")
    assert not tp.accept("capture", 2, direct=True)
    assert tp.accept("capture", 1, direct=False) and tp.accept("capture", 2, direct=False)
    assert tp.proven("capture") and tp.accept("capture", 3, direct=True)


def test_a_restarted_sender_must_show_its_direct_path_again():
    tp = TwoPaths()
    assert tp.accept("frontend", 0, direct=False) and not tp.accept("frontend", 0, direct=True)
    assert tp.accept("frontend", 1, direct=True)  # trusted
    life = first_seq(1)  # after a restart the numbers start again, in a new life
    assert tp.accept("frontend", life + 1, direct=True) is False  # life + 0 may have been missed on this path
    assert tp.accept("frontend", life, direct=False) is True
    assert tp.accept("frontend", life + 1, direct=False) is True
    assert tp.accept("frontend", life + 2, direct=True) is True


def _env(src: str, seq: int, after: dict[str, int] | None = None):
    from edge.wire import decode
    return decode(encode(m.EndOfInput(seq, 0), seq=seq, epoch=0, t_ns=0, src=src, after=after))


def test_the_journal_holds_an_effect_until_its_cause_and_lets_go_of_one_whose_cause_never_comes():
    from edge.timeline.causal import CausalOrder

    order = CausalOrder(hold_s=2.0)
    effect = _env("frontend", 7, {"capture": 3})
    assert order.push(1, effect, now=0.0) == []  # capture's 3 has not been journaled yet
    later = _env("frontend", 8, {})
    assert order.push(2, later, now=0.1) == []  # a sender's later message never overtakes its earlier one
    cause = _env("capture", 3)
    assert [e.seq for _, e in order.push(3, cause, now=0.2)] == [3, 7, 8]
    lost = _env("speech", 2, {"capture": 9})  # capture's 9 never comes (sent before a recorder restart)
    assert order.push(4, lost, now=1.0) == [] and order.expire(now=2.9) == []
    assert [e.seq for _, e in order.expire(now=3.1)] == [2] and order.let_go == 1
