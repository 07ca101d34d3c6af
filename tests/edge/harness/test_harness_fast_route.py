"""The fast path: a request that plainly names one tool is routed by rules, without the model; the rest is not."""
from __future__ import annotations

import sys
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from edge.clock import VirtualClock
from edge.harness import states as S
from edge.harness.assemble import build_harness
from edge.harness.capability import Registry
from edge.harness.fast_route import FastRouter
from edge.harness.router import ScriptedRouter
from edge.language.say import clock_time
from edge.messages import WorkEvent
from harness_helpers import Emitted, ScriptedCapability
from test_harness_home import TOKEN, HomeServer, finish, said

NO_MODEL = {"scripted": {"rules": [], "default": None}}  # stands where the model is: it fails if asked


def routed(emit: Emitted, work_id: str) -> dict:
    [event] = [e for e in emit if isinstance(e, WorkEvent) and e.work_id == work_id and e.detail.startswith("routed")]
    return event.info


@pytest.fixture(scope="module")
def time_built(tmp_path_factory):
    pytest.importorskip("mcp_server_time", reason="pip install mcp-server-time (the harness extra)")
    clock, emit = VirtualClock(), Emitted()
    cfg = {"mcp": [{"name": "time", "command": sys.executable, "args": ["-m", "mcp_server_time"]}],
           "router": {"fast": NO_MODEL}, "retries": 0}
    built = build_harness(cfg, tmp_path_factory.mktemp("fast"), clock, emit)
    assert built.problems == []
    yield built, clock, emit
    built.close()


def test_the_tokyo_question_is_routed_by_rules_and_answered(time_built):
    built, clock, emit = time_built
    before = datetime.now(ZoneInfo("Asia/Tokyo"))
    t0 = time.monotonic()
    text = said(finish(built, clock, "f1", "What time is it in Tokyo right now?"))
    wall = time.monotonic() - t0
    after = datetime.now(ZoneInfo("Asia/Tokyo"))
    assert text in {f"It's {clock_time(t.time())} on {t:%A} in Tokyo." for t in (before, after)}, text
    info = routed(emit, "f1")
    assert info["route"] == "rules" and info["arguments"] == {"timezone": "Asia/Tokyo"}
    assert "get_current_time" in info["why"] and "Asia/Tokyo" in info["why"]
    print(f"delegate to spoken text, fast path, server already running: {wall:.2f} s")


def test_new_york_is_routed_to_the_time_tool_with_its_iana_zone(time_built):
    built, clock, emit = time_built
    before = datetime.now(ZoneInfo("America/New_York"))
    text = said(finish(built, clock, "f3", "What time is it in New York?"))
    after = datetime.now(ZoneInfo("America/New_York"))
    info = routed(emit, "f3")
    assert info["route"] == "rules" and info["capability"] == "time.get_current_time"
    assert info["arguments"] == {"timezone": "America/New_York"}
    assert text in {f"It's {clock_time(t.time())} on {t:%A} in New York." for t in (before, after)}, text


def test_a_vague_or_two_tool_request_goes_to_the_other_router_and_says_why(time_built):
    built, clock, emit = time_built
    registry = Registry()
    for cap in built.harness.registry:
        registry.add(cap)
    registry.add(ScriptedCapability("general"))
    router = FastRouter(ScriptedRouter([], "general"))
    vague = router.route("tell me something nice", registry, [])
    assert (vague.capability, vague.path) == ("general", "scripted") and "no capability clearly matched" in vague.why
    # a conversion needs three arguments that rules cannot fill: the model's to decide
    why = router.route("convert half past four in Tokyo to London time", registry, []).why
    assert "convert_time matched but its arguments need the model" in why
    item = finish(built, clock, "f2", "convert half past four in Tokyo to London time")
    assert item.state == S.FAILED and "no capability fits" in said(item)


def test_turn_off_the_kitchen_light_is_routed_by_rules_over_http(tmp_path, monkeypatch):
    monkeypatch.setenv("HA_TOKEN", TOKEN)
    server = HomeServer(tmp_path).start()
    clock, emit = VirtualClock(), Emitted()
    cfg = {"mcp": [{"name": "home", "url": server.url, "token_env": "HA_TOKEN"}], "retries": 0,
           "router": {"fast": NO_MODEL}}
    built = build_harness(cfg, tmp_path / "s", clock, emit)
    try:
        assert built.problems == []
        assert said(finish(built, clock, "h1", "turn off the kitchen light")) == "Turned off the Kitchen Light."
        assert server.state()["light.kitchen"] == "off"
        info = routed(emit, "h1")
        assert info["route"] == "rules" and info["capability"] == "home.HassTurnOff"
        assert info["arguments"] == {"name": "kitchen light"}
        assert said(finish(built, clock, "h3", "turn on the lights in the living room")) == \
            "Turned on the Living Room Lamp."
        assert server.state()["light.lamp"] == "on"
        assert routed(emit, "h3")["arguments"] == {"area": "living room", "domain": ["light"]}
        # "is the kitchen light on?" names no tool plainly: not decided by rules
        item = finish(built, clock, "h2", "is the kitchen light on?")
        assert item.state == S.FAILED and "no capability fits" in said(item)
    finally:
        built.close()
        server.stop()


def test_a_near_tie_is_left_to_the_other_router():
    dim, bright = ScriptedCapability("light.dim"), ScriptedCapability("light.brighten")
    dim.description, bright.description = "Dims a light in a room.", "Brightens a light in a room."
    registry = Registry()
    for cap in (dim, bright, ScriptedCapability("general")):
        registry.add(cap)
    choice = FastRouter(ScriptedRouter([], "general")).route("the light in the room", registry, [])
    assert choice.capability == "general" and "matched about as well" in choice.why
