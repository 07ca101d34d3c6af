"""On the direct bus a node takes a message once: a topic whose senders' direct paths are proven leaves its
proxy subscription, and comes back before a restarted sender's next life starts, so nothing of that life is
lost and each life's messages arrive once, in order."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from edge import messages as m
from edge.graph.proxy_topics import ProxyTopics
from edge.graph.supervisor import Supervisor, SupervisorSettings
from edge.graph.two_paths import TwoPaths, first_seq
from edge.session import ALL_NODES
from edge.wire import topic_of, topics_for

from bus_nodes import CHUNKS, CRASH_AT
from repo_paths import SUPPORT

FOR_FRONTEND = ("audio_chunk", "speech_activity", "duck", "end_of_input")


@pytest.fixture
def nodes_path(monkeypatch):
    """Node processes can import the test nodes (and this tree's edge package)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(SUPPORT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.syspath_prepend(str(SUPPORT))


def _session(tmp: Path, capture: str, inprocess: bool) -> tuple[dict, dict]:
    configs = {"capture": {"out": str(tmp / "capture.json")}, "frontend": {"out": str(tmp / "frontend.json")}}
    nodes = {"capture": f"bus_nodes:{capture}", "frontend": "bus_nodes:AnsweringFrontend"}
    report = Supervisor(configs, nodes, required=("frontend",), inprocess=inprocess,
                        settings=SupervisorSettings(bus="direct", handshake_timeout_s=60.0)).run()
    assert report.ok, report.reason
    return json.loads((tmp / "frontend.json").read_text()), report.node_stats["frontend"]["paths"]


def _for_frontend(log: Path) -> list:
    return [k for k in json.loads(log.read_text())["sent"] if k[0] in FOR_FRONTEND]


@pytest.mark.parametrize("inprocess", [False, True])
def test_once_the_direct_path_is_proven_each_message_is_received_once(tmp_path, nodes_path, inprocess):
    frontend, paths = _session(tmp_path, "InterleavingCapture", inprocess)
    assert frontend["got"] == _for_frontend(tmp_path / "capture.json")
    # Each message came on both paths before (369 second copies). Now only ducks (the frontend may duck too,
    # and it never hears its own direct path proven) and the few on their way through the proxy when capture's
    # path was proven still come twice.
    sent = len(frontend["got"])
    assert paths["direct"] > sent // 2
    assert paths["second_copies"] < CHUNKS // 5 + sent // 10, f"{paths['second_copies']} of {sent} came twice"


@pytest.mark.parametrize("inprocess", [False, True])
def test_a_restarted_sender_is_heard_through_the_proxy_again_and_nothing_it_sends_is_lost(tmp_path, nodes_path,
                                                                                         inprocess):
    frontend, paths = _session(tmp_path, "CrashingCapture", inprocess)
    first, second = _for_frontend(tmp_path / "capture.json"), _for_frontend(tmp_path / "capture.json.next")
    assert [k for k in first if k[0] == "audio_chunk"][-1] == ["audio_chunk", CRASH_AT - 1]
    assert len([k for k in second if k[0] == "audio_chunk"]) == CHUNKS
    assert frontend["got"] == first + second  # each life's messages once, in order, none lost
    twice = (CRASH_AT + CHUNKS) // 5 + len(frontend["got"]) // 10  # ducks, and a few on their way at each proof
    assert paths["second_copies"] < twice


def test_a_topic_leaves_the_proxy_once_each_sender_on_it_is_proven_and_returns_when_a_life_ends():
    routes, tp = ProxyTopics(topics_for("frontend"), "frontend", ALL_NODES), TwoPaths()
    audio, duck, typed = topic_of(m.AudioChunk), topic_of(m.Duck), topic_of(m.TypedText)
    assert routes.update(tp.proven) == ([], [])
    assert tp.accept("capture", 0, direct=False) and not tp.accept("capture", 0, direct=True)
    drop, back = routes.update(tp.proven)
    assert audio in drop and back == []
    assert duck not in drop  # the frontend may duck too, and its own direct path is not proven
    assert typed not in drop  # typed text comes from the supervisor: only through the proxy
    tp.ended("capture")  # the supervisor says capture will be restarted
    assert routes.update(tp.proven) == ([], drop)
    life = first_seq(1)
    assert not tp.accept("capture", life, direct=True)  # the next life's direct path is not proven yet
    assert routes.update(tp.proven) == ([], [])
    assert tp.accept("capture", life, direct=False)
    assert routes.update(tp.proven) == (drop, [])
