"""Every declared route is real: its senders really send it, its receivers really get and handle it.

Routes are declared once, on the message classes (SENDERS, RECEIVERS); a
node's subscriptions are derived from them. Here real sessions (one on the
virtual clock with echo, barge-in, a camera read by the vision node and interrupts; one in real
time with delegated work; one whose microphone is missing) are watched at
the sockets, and each node's code is read for what it handles.
"""
from __future__ import annotations

import ast
import collections
import inspect
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from edge import messages as m
from edge.audio_format import RATE
from edge.graph.loader import load_class
from edge.graph.node import Node, NodeIO
from edge.graph.runner import NodeRunner
from edge.graph.supervisor import Supervisor, SupervisorSettings
from edge.nodes import NODES
from edge.session import SessionConfig, make_supervisor, nodes_for, run_session
from edge.timeline.journal import Journal
from edge.wire import ANY_NODE, OUTSIDE, SUPERVISOR, Message, all_types, decode, lookup, on_bus, receives, topic_of
from kernels.resample import resample
from skill_files import returning, route_all_to, write_skill
from repo_paths import SUPPORT

LONG_REPLY = ("The printing press changed Europe within a single lifetime. Books became cheap, and ideas moved "
              "faster than any ruler could follow. Scholars shared their findings with each other.")
RUNNER_ONLY = (m.Ack, m.Probe)  # handled by the node runner itself, never handed to a node


def node_classes() -> dict[str, type[Node]]:
    return {name: load_class(path) for name, path in NODES.items()}


def checked_types(cls: type) -> set[type[Message]]:
    """The message types a class's code tests a message against: isinstance(x, m.T) or (m.T, m.U)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance" and len(node.args) == 2:
            arg = node.args[1]
            for el in arg.elts if isinstance(arg, ast.Tuple) else [arg]:
                if isinstance(el, ast.Attribute) and getattr(el.value, "id", "") == "m":
                    found.add(getattr(m, el.attr))
    return found


# --- what the code says -------------------------------------------------------------------------------------
def test_each_node_handles_exactly_the_messages_routed_to_it():
    for name, cls in node_classes().items():
        assert cls.name == name, f"{cls.__name__} says it is {cls.name!r} but runs as {name!r}"
        routed = {t for t in all_types().values() if on_bus(t) and name in t.RECEIVERS}
        handled = checked_types(cls)
        if cls.hears_everything:  # the recorder journals every message and acts on some
            assert handled <= routed, f"{name} acts on {handled - routed}, which no message routes to it"
            continue
        assert handled - routed == set(), f"{name} handles {handled - routed} but no route brings them to it"
        assert routed - handled == set(), f"{name} is sent {routed - handled} but never handles them"
        for t in routed:
            assert topic_of(t, name) in cls.topics(), f"{name} does not subscribe to {t.TYPE}"


def test_control_messages_are_handled_where_they_are_routed():
    supervisor, runner = checked_types(Supervisor), checked_types(NodeRunner)
    for t in all_types().values():
        if SUPERVISOR in t.RECEIVERS:
            assert t in supervisor, f"{t.TYPE} is routed to the supervisor, which never handles it"
        if ANY_NODE in t.RECEIVERS:
            assert t in runner, f"{t.TYPE} is routed to every node, but the node runner never handles it"


def test_no_bus_topic_catches_another():
    """A SUB socket matches topic prefixes: a topic that starts another would deliver undeclared messages."""
    topics = sorted({topic_of(t, n) for t in all_types().values() if on_bus(t) for n in NODES})
    for a in topics:
        for b in topics:
            assert a == b or not b.startswith(a), f"subscribing to {a!r} also receives {b!r}"


def test_every_message_documents_its_route_and_each_field():
    for t in all_types().values():
        assert "->" in (t.__doc__ or ""), f"{t.__name__}: the docstring must say who sends it to whom"
        body = ast.parse(textwrap.dedent(inspect.getsource(t))).body[0].body
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.AnnAssign):
                nxt = body[i + 1] if i + 1 < len(body) else None
                ok = isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and \
                    isinstance(nxt.value.value, str) and "\n" not in nxt.value.value.strip()
                assert ok, f"{t.__name__}.{stmt.target.id} needs a one-line docstring"


# --- what the sessions do ----------------------------------------------------------------------------------
Traffic = dict[str, dict[str, set[str]]]  # "sent" / "got": message type -> node names


def say(text: str, tmp: Path) -> np.ndarray:
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is needed (apt-get install espeak-ng)")
    wav = tmp / "say.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), text], check=True, capture_output=True)
    x, rate = sf.read(str(wav), dtype="float32")
    return resample(x, rate, RATE)


def duplex_session(d: Path) -> Path:
    """Virtual clock: a long reply with the room's echo, the user talking over it, frames, a scripted interrupt."""
    user = 0.25 * say("Wait, stop. What is the capital of France?", d)
    mic = 1e-4 * np.random.default_rng(0).standard_normal(10 * RATE).astype(np.float32)
    mic[int(3.3 * RATE):int(3.3 * RATE) + len(user)] += user
    sf.write(str(d / "mic.wav"), mic, RATE)
    frames = d / "frames"
    frames.mkdir()
    import cv2

    for i in range(4):
        cv2.imwrite(str(frames / f"{i:06d}.png"), np.full((24, 32, 3), 40 * i, np.uint8))
    (d / "script.txt").write_text(f"0 speak {LONG_REPLY}\n7 interrupt\n8 speak Where were we.\n")
    cfg = SessionConfig(mic=str(d / "mic.wav"), camera=str(frames), speaker=str(d / "reply.wav"),
                        journal=str(d / "a.journal"), realtime=False, frontend=f"scripted:{d / 'script.txt'}",
                        voice="espeak", speaker_rate=16000, echo_cancel=True,
                        room_echo={"delay_ms": 120.0, "gain_db": -6.0}, extra={"vision": True})
    assert run_session(cfg, inprocess=True, settings=SupervisorSettings(hang_s=120.0)).ok
    return Path(cfg.journal)


def harness_session(d: Path) -> Path:
    """Real time: a delegated request answered by a skill, spoken, played and confirmed delivered; capture hands
    the chunks over in pieces before their boundaries, and scripted words go to the voice ahead."""
    write_skill(d / "skills", "answer", returning("The answer is 42."))
    # A room above capture's noise gate (a quiet one hands nothing over before the boundaries).
    sf.write(str(d / "in.wav"), 0.003 * np.random.default_rng(1).standard_normal(RATE * 7).astype(np.float32), RATE)
    # The words of chunk 3 are known before its boundary: they go to the voice ahead (DraftAhead).
    (d / "script.txt").write_text("0 delegate What is the answer?\n3 speak One moment.\n")
    cfg = SessionConfig(mic=str(d / "in.wav"), speaker="null", journal=str(d / "b.journal"), chunk_ms=500,
                        frontend=f"scripted:{d / 'script.txt'}", voice="null", realtime=True,
                        extra={"harness": {"dir": str(d / "harness"), "skills": str(d / "skills"),
                                           "router": route_all_to("answer")}})
    sup = make_supervisor(cfg, nodes_for(cfg), inprocess=True, virtual_clock=False)
    sup.type_text("Typed while the session runs.")  # as the --http page's box does: the supervisor puts it on the bus
    assert sup.run().ok
    return Path(cfg.journal)


def restart_session(d: Path) -> Path:
    """Virtual clock: the frontend fails at chunk 3 and is restarted; it asks capture for what it lost."""
    sf.write(str(d / "in.wav"), np.zeros(RATE * 6, np.float32), RATE)
    (d / "script.txt").write_text("1 speak Hello there.\n")
    cfg = SessionConfig(mic=str(d / "in.wav"), speaker="null", journal=str(d / "c.journal"), realtime=False,
                        frontend=f"scripted:{d / 'script.txt'}", voice="null")
    report = run_session(cfg, inprocess=True, node_classes={"frontend": "faulty_nodes:CrashOnceFrontend"})
    assert report.ok and report.restarts["frontend"] == 1, report.reason
    return Path(cfg.journal)


def wake_session(d: Path) -> Path:
    """Virtual clock: the wake word opens the microphone to the frontend; two quiet seconds close it."""
    pytest.importorskip("pymicro_wakeword", reason="wake words need pymicro-wakeword (the models extra)")
    mic = np.zeros(6 * RATE, np.float32)
    word = 0.6 * say("okay nabu", d)
    mic[RATE:RATE + len(word)] += word
    sf.write(str(d / "in.wav"), mic, RATE)
    (d / "script.txt").write_text("# nothing said\n")
    cfg = SessionConfig(mic=str(d / "in.wav"), speaker="null", journal=str(d / "w.journal"), realtime=False,
                        frontend=f"scripted:{d / 'script.txt'}", voice="null", wake="okay_nabu", wake_idle_s=2.0)
    assert run_session(cfg, inprocess=True).ok
    return Path(cfg.journal)


def failed_start(d: Path) -> None:
    """A microphone that is not there: capture reports it cannot start."""
    cfg = SessionConfig(mic="7", speaker="null", frontend="null", voice="null")
    assert not run_session(cfg, inprocess=True, nodes=["capture"]).ok


@pytest.fixture(scope="module")
def traffic(tmp_path_factory) -> tuple[Traffic, list[Journal]]:
    """Who sent and who was handed each message type, watched at the node's and the supervisor's sockets."""
    sent: dict[str, set[str]] = collections.defaultdict(set)
    got: dict[str, set[str]] = collections.defaultdict(set)

    def watch_io(method):
        def wrapper(self, msg, *args, **kwargs):
            sent[msg.TYPE].add(self.name)
            return method(self, msg, *args, **kwargs)
        return wrapper

    def watch_frames(self, frames):
        sent[decode(frames).type].add(self.name)
        return plain_send_frames(self, frames)

    def watch_supervisor(method):
        def wrapper(self, *args, **kwargs):
            sent[next(a for a in args if isinstance(a, Message)).TYPE].add(SUPERVISOR)
            return method(self, *args, **kwargs)
        return wrapper

    def watch_node(cls):
        method = cls.on_message

        def wrapper(self, env):
            got[env.type].add(self.name)
            return method(self, env)
        return wrapper

    plain_send_frames = NodeIO.send_frames
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(NodeIO, "publish", watch_io(NodeIO.publish))
        mp.setattr(NodeIO, "control", watch_io(NodeIO.control))
        mp.setattr(NodeIO, "send_frames", watch_frames)
        mp.setattr(Supervisor, "_send", watch_supervisor(Supervisor._send))
        mp.setattr(Supervisor, "_publish", watch_supervisor(Supervisor._publish))
        for cls in node_classes().values():
            mp.setattr(cls, "on_message", watch_node(cls))
        mp.syspath_prepend(str(SUPPORT))  # the failing frontend of the restart session
        journals = [Journal(duplex_session(tmp_path_factory.mktemp("duplex"))),
                    Journal(harness_session(tmp_path_factory.mktemp("harness"))),
                    Journal(restart_session(tmp_path_factory.mktemp("restart"))),
                    Journal(wake_session(tmp_path_factory.mktemp("wake")))]
        failed_start(tmp_path_factory.mktemp("nomic"))
    return {"sent": dict(sent), "got": dict(got)}, journals


def test_every_message_comes_from_a_sender_its_type_names(traffic):
    for type_name, senders in traffic[0]["sent"].items():
        t = lookup(type_name)
        for s in senders:
            assert s in t.SENDERS or (ANY_NODE in t.SENDERS and s in NODES), \
                f"{s} sent {type_name}, but its SENDERS are {t.SENDERS}"


def test_every_declared_sender_really_sends_it(traffic):
    sent = traffic[0]["sent"]
    missing = [f"{t.TYPE} from {s}" for t in all_types().values() for s in t.SENDERS
               if s != OUTSIDE and not (sent.get(t.TYPE, set()) & (set(NODES) if s == ANY_NODE else {s}))]
    assert not missing, f"declared but never sent: {', '.join(missing)}"


def test_every_declared_receiver_is_handed_it(traffic):
    sent, got = traffic[0]["sent"], traffic[0]["got"]
    missing = [f"{t.TYPE} to {n}" for t in all_types().values() if on_bus(t) and t not in RUNNER_ONLY
               for n in NODES if n in t.RECEIVERS and sent.get(t.TYPE) and n not in got.get(t.TYPE, set())]
    assert not missing, f"sent but never reached a receiver it names: {', '.join(missing)}"
    for type_name, nodes in got.items():
        for n in nodes:
            t = lookup(type_name)
            assert receives(t, n) or node_classes()[n].hears_everything, f"{n} was handed {type_name} undeclared"


def test_what_is_routed_to_the_recorder_is_in_the_journal(traffic):
    journaled = {msg.TYPE for j in traffic[1] for _, msg in j.messages()}
    for t in all_types().values():
        if "recorder" in t.RECEIVERS:
            assert t.TYPE in journaled, f"{t.TYPE} is routed to the recorder but not in any journal"



def test_every_type_is_exported_as_edge_messages_name():
    assert {t.__name__ for t in all_types().values()} == set(m.__all__)
