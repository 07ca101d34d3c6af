"""Real MCP servers through the harness, answers said in words: the third-party time server over stdio,
and a Home-Assistant-shaped server over streamable HTTP with a bearer token."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from edge.clock import VirtualClock
from edge.harness import states as S
from edge.harness.assemble import build_harness
from edge.language.say import clock_time
from harness_helpers import Emitted, advance
from repo_paths import SUPPORT
from waiting import until

TOKEN = "long-lived-test-token"
UNSPEAKABLE = re.compile(r'[{}\[\]"]|\d{4}-\d{2}-\d{2}|T\d{2}:\d{2}')
HOME_RULES = [
    {"match": "turn on the lights in the (.*)", "capability": "home.HassTurnOn",
     "arguments": {"area": "{1}", "domain": ["light"]}},
    {"match": "turn off the (.*) light", "capability": "home.HassTurnOff", "arguments": {"name": "{1} light"}},
    {"match": "turn on the (.*) light", "capability": "home.HassTurnOn", "arguments": {"name": "{1} light"}},
    {"match": "is the .* on", "capability": "home.GetLiveContext", "arguments": {}},
]


def finish(built, clock, work_id: str, instruction: str, timeout_s: float = 20.0):
    h = built.harness
    h.accept(work_id, instruction, clock.now_ns(), 0)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        advance(h, clock, 0.1)
        item = h.store.get(work_id)
        if item.state in (S.COMPLETED, S.FAILED):
            return item
    raise AssertionError(f"{instruction!r} did not finish")


def said(item) -> str:
    text = item.result if item.state == S.COMPLETED else item.notice
    assert text and not UNSPEAKABLE.search(text), text
    return text


@pytest.fixture(scope="module")
def time_built(tmp_path_factory):
    pytest.importorskip("mcp_server_time", reason="pip install mcp-server-time (the harness extra)")
    clock, emit = VirtualClock(), Emitted()
    cfg = {"mcp": [{"name": "time", "command": sys.executable, "args": ["-m", "mcp_server_time"]}],
           "router": {"scripted": {"rules": [
               {"match": "time is it in Tokyo", "capability": "time.get_current_time",
                "arguments": {"timezone": "Asia/Tokyo"}},
               {"match": "half past four in Tokyo", "capability": "time.convert_time",
                "arguments": {"source_timezone": "Asia/Tokyo", "time": "16:30", "target_timezone": "Europe/London"}},
               {"match": "Atlantis", "capability": "time.get_current_time", "arguments": {"timezone": "Atlantis"}}]}}}
    built = build_harness(cfg, tmp_path_factory.mktemp("time"), clock, emit)
    assert built.problems == []
    yield built, clock
    built.close()


def test_the_third_party_time_server_answers_tokyo_in_a_spoken_sentence(time_built):
    built, clock = time_built
    before = datetime.now(ZoneInfo("Asia/Tokyo"))
    text = said(finish(built, clock, "t1", "What time is it in Tokyo right now?"))
    after = datetime.now(ZoneInfo("Asia/Tokyo"))
    assert text in {f"It's {clock_time(t.time())} on {t:%A} in Tokyo." for t in (before, after)}, text


def test_a_conversion_between_zones_is_one_sentence(time_built):
    built, clock = time_built
    text = said(finish(built, clock, "t2", "what is half past four in Tokyo in London time?"))
    assert text == "4:30 in the afternoon in Tokyo is 7:30 in the morning in London."


def test_a_tool_error_from_the_time_server_is_said_in_words(time_built):
    built, clock = time_built
    item = finish(built, clock, "t3", "what time is it in Atlantis?")
    assert item.state == S.FAILED and "Atlantis" in said(item)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HomeServer:
    """The Home-Assistant-shaped test server in a subprocess on a loopback port."""

    def __init__(self, tmp: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.state_file = tmp / "home_state.json"
        self.proc: subprocess.Popen | None = None

    def start(self) -> "HomeServer":
        self.proc = subprocess.Popen([sys.executable, str(SUPPORT / "home_mcp_server.py"), str(self.port), TOKEN,
                                      str(self.state_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                assert self.proc.poll() is None, "the test server exited"
                time.sleep(0.05)
        raise AssertionError("the test server did not start")

    def state(self) -> dict:
        return json.loads(self.state_file.read_text())

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


def home_cfg(url: str, **extra) -> dict:
    return {"mcp": [{"name": "home", "url": url, "token_env": "HA_TOKEN", "retry_s": 0.3, **extra}],
            "retries": 0, "router": {"scripted": {"rules": HOME_RULES}}}


def test_turn_off_the_kitchen_light_over_http_changes_the_servers_state(tmp_path, monkeypatch):
    monkeypatch.setenv("HA_TOKEN", TOKEN)
    server = HomeServer(tmp_path).start()
    clock, emit = VirtualClock(), Emitted()
    built = build_harness(home_cfg(server.url), tmp_path / "s", clock, emit)
    try:
        assert built.problems == []
        assert {"home.HassTurnOn", "home.HassTurnOff", "home.GetLiveContext"} <= set(built.harness.registry.names())
        assert server.state()["light.kitchen"] == "on"
        assert said(finish(built, clock, "h1", "turn off the kitchen light")) == "Turned off the Kitchen Light."
        assert server.state()["light.kitchen"] == "off"
        assert said(finish(built, clock, "h2", "is the kitchen light on?")) == "The Kitchen Light is off."
        assert said(finish(built, clock, "h3", "turn on the lights in the living room")) == \
            "Turned on the Living Room Lamp."  # the server chose the device; the reply names it
        assert server.state()["light.lamp"] == "on"
        assert said(finish(built, clock, "h4", "turn off the garage light")) == "That didn't work: no valid targets."
    finally:
        built.close()
        server.stop()


def test_a_wrong_token_is_one_sentence_and_nothing_is_registered(tmp_path, monkeypatch):
    monkeypatch.setenv("HA_TOKEN", "not-the-token")
    server = HomeServer(tmp_path).start()
    clock, emit = VirtualClock(), Emitted()
    built = build_harness(home_cfg(server.url), tmp_path / "s", clock, emit)
    try:
        assert len(built.problems) == 1 and "refused the access token" in built.problems[0]
        assert not any(n.startswith("home.") for n in built.harness.registry.names())
        assert server.state()["light.kitchen"] == "on"
    finally:
        built.close()
        server.stop()


def test_a_token_in_the_json_or_a_missing_variable_is_refused_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.delenv("HA_TOKEN", raising=False)
    clock, emit = VirtualClock(), Emitted()
    with pytest.raises(ValueError, match="^the MCP server home has its token written in the settings; put it in an "
                                         "environment variable"):  # a settings mistake: nothing starts
        build_harness({"mcp": [{"name": "home", "url": "http://127.0.0.1:9/mcp", "token": "x"}]}, tmp_path / "t",
                      clock, emit)
    built = build_harness({"mcp": [{"name": "env", "url": "http://127.0.0.1:9/mcp", "token_env": "HA_TOKEN"},
                                   {"name": "file", "url": "http://127.0.0.1:9/mcp",
                                    "token_file": str(tmp_path / "nope")}]}, tmp_path / "s", clock, emit)
    try:
        assert len(built.problems) == 2
        assert "environment variable HA_TOKEN" in built.problems[0]
        assert "cannot be read" in built.problems[1]
    finally:
        built.close()


def test_the_token_can_come_from_a_file(tmp_path, monkeypatch):
    (tmp_path / "token").write_text(TOKEN + "\n")
    (tmp_path / "token").chmod(0o600)  # a token file others can read is refused
    server = HomeServer(tmp_path).start()
    clock, emit = VirtualClock(), Emitted()
    cfg = {"mcp": [{"name": "home", "url": server.url, "token_file": str(tmp_path / "token")}],
           "router": {"scripted": {"rules": HOME_RULES}}}
    built = build_harness(cfg, tmp_path / "s", clock, emit)
    try:
        assert said(finish(built, clock, "f1", "turn off the kitchen light")) == "Turned off the Kitchen Light."
    finally:
        built.close()
        server.stop()


def test_the_capability_comes_back_when_the_server_does(tmp_path, monkeypatch):
    monkeypatch.setenv("HA_TOKEN", TOKEN)
    server = HomeServer(tmp_path)  # not started yet: down when the harness starts
    clock, emit = VirtualClock(), Emitted()
    built = build_harness(home_cfg(server.url), tmp_path / "s", clock, emit)
    try:
        assert len(built.problems) == 1 and "the home server cannot be reached" in built.problems[0]
        assert built.harness.registry.get("home.HassTurnOff") is None
        server.start()
        until(lambda: built.harness.registry.get("home.HassTurnOff") is not None, "the tools never appeared")
        assert said(finish(built, clock, "b1", "turn off the kitchen light")) == "Turned off the Kitchen Light."
        server.stop()  # goes away while registered: one sentence
        item = finish(built, clock, "b2", "turn on the kitchen light")
        assert item.state == S.FAILED
        assert said(item) == "Sorry, I couldn't finish that: the home server cannot be reached."
        server.start()  # and back again: the same capability works
        deadline = time.monotonic() + 20
        while True:
            item = finish(built, clock, f"b3-{time.monotonic()}", "turn on the kitchen light")
            if item.state == S.COMPLETED or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert said(item) == "Turned on the Kitchen Light." and server.state()["light.kitchen"] == "on"
    finally:
        built.close()
        server.stop()
