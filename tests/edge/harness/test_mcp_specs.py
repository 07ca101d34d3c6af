"""An MCP server entry of the harness settings is read once when the session starts: a wrong kind, a name the entry
has no field for, or an entry that is not one server is one sentence naming the server and the setting, from the
command line and from a session's builder, before any node starts; entries as the guides show them still reach
their tools with their timeout."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from edge.clock import VirtualClock
from edge.harness.assemble import build_harness
from edge.harness.settings import check_harness
from edge.session import SessionConfig, SettingsError, make_supervisor, nodes_for
from harness_refusals import refused_by_the_session, refused_on_the_command_line
from repo_paths import SUPPORT

HOME = "http://127.0.0.1:9/api/mcp"
WRONG = [
    ({"name": "home", "url": HOME, "timeout_s": "ten"},
     "the MCP server home's timeout_s is 'ten'; it must be a number."),
    ({"name": "home", "url": HOME, "retry_s": 0}, "the MCP server home's retry_s is 0; it must be more than 0 and at "
                                                  "most 86400."),
    ({"name": "home", "url": HOME, "transport": "websocket"},
     "the MCP server home's transport is 'websocket'; it must be 'streamable-http' or 'sse'."),
    ({"name": "home", "url": HOME, "token_env": 5}, "the MCP server home's token_env is 5; it must be text."),
    ({"name": "home", "url": HOME, "token": "abc"},
     "the MCP server home has its token written in the settings; put it in an environment variable (\"token_env\") "
     "or a file (\"token_file\") instead."),
    ({"name": "home", "url": HOME, "tokn_env": "HA_TOKEN"},
     "the MCP server home has no setting 'tokn_env'; known: name, retry_s, timeout_s, token_env, token_file, "
     "transport, url."),
    ({"name": "files", "command": "python3", "args": "server.py"},
     "the MCP server files's args is 'server.py'; it must be a list."),
    ({"name": "files", "command": "python3", "args": ["server.py", 3]},
     "the MCP server files's args holds 3; each argument must be text."),
    ({"name": "files", "command": "python3", "env": {"TOKEN": 5}},
     "the MCP server files's env TOKEN is 5; it must be text."),
    ({"name": "files", "command": "python3", "retry_s": 5},
     "the MCP server files has no setting 'retry_s'; known: args, command, cwd, env, name, timeout_s."),
    ({"name": "files", "comand": "python3"},
     "the MCP server files has no setting 'comand'; known: args, command, cwd, env, name, retry_s, timeout_s, "
     "token_env, token_file, transport, url."),
    ({"name": "files"}, "the MCP server files needs 'command' (a program run here) or 'url' (a server reached over "
                        "HTTP)."),
    ({"name": "files", "command": "python3", "url": HOME},
     "the MCP server files has both 'command' and 'url'; give 'command' to run it here or 'url' to reach it."),
    ({"command": "python3"}, "the harness's MCP server entry 1 has no name; give each server a name as text (its "
                             "tools are called NAME.TOOL)."),
]
IDS = [json.dumps(entry) for entry, _ in WRONG]


@pytest.mark.parametrize("entry,sentence", [WRONG[0], WRONG[5], WRONG[10]], ids=[IDS[0], IDS[5], IDS[10]])
def test_a_wrong_mcp_entry_is_one_sentence_from_the_command_line(tmp_path, entry, sentence):
    assert refused_on_the_command_line(tmp_path, {"mcp": [entry]}) == f"venus-edge: {sentence}"


@pytest.mark.parametrize("entry,sentence", WRONG, ids=IDS)
def test_a_wrong_mcp_entry_stops_the_session_before_any_node_starts(entry, sentence):
    assert refused_by_the_session({"mcp": [entry]}) == sentence



def test_two_servers_of_one_name_are_refused():
    cfg = SessionConfig(mic="in.wav", voice="null", extra={"harness": {"mcp": [
        {"name": "home", "url": HOME}, {"name": "home", "command": "python3"}]}})
    with pytest.raises(SettingsError, match=r"^two MCP servers are named home; give each its own name \(its tools "
                                            r"are called home\.TOOL\)\.$"):
        make_supervisor(cfg, nodes_for(cfg))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def home_url(tmp_path, monkeypatch):
    """The Home-Assistant-shaped test server over streamable HTTP on a loopback port, its token in HA_TOKEN."""
    port, token = free_port(), "long-lived-test-token"
    monkeypatch.setenv("HA_TOKEN", token)
    proc = subprocess.Popen([sys.executable, str(SUPPORT / "home_mcp_server.py"), str(port), token,
                             str(tmp_path / "state.json")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "the test server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_entries_as_the_guides_show_them_reach_their_tools_with_their_timeout(tmp_path, home_url):
    cfg = {"mcp": [{"name": "home", "url": home_url, "token_env": "HA_TOKEN", "timeout_s": 10},
                   {"name": "conv", "command": sys.executable, "args": [str(SUPPORT / "mcp_server.py")],
                    "timeout_s": 20},
                   {"name": "plain", "command": sys.executable, "args": [str(SUPPORT / "mcp_server.py")]}]}
    check_harness(cfg)
    built = build_harness(cfg, tmp_path / "s", VirtualClock(), lambda msg: None)
    try:
        assert built.problems == []
        registry, settings = built.harness.registry, built.harness.s
        seconds = {name: settings.timeout_for(name, registry.get(name).timeout_s)
                   for name in ("home.HassTurnOff", "conv.celsius_to_fahrenheit", "plain.shout")}
        assert seconds == {"home.HassTurnOff": 10.0, "conv.celsius_to_fahrenheit": 20.0, "plain.shout": 30.0}
    finally:
        built.close()
