"""Home Assistant down, or refusing the token: a Wyoming transcript is answered with one honest sentence, not
with whatever the request fell through to without Home Assistant's tools."""
from __future__ import annotations

import http.server
import socket
import threading

import pytest

pytest.importorskip("mcp", reason="pip install mcp (the harness extra)")

from edge.wyoming.converse import Conversation

pytestmark = pytest.mark.slow  # the harness and its tool server start twice (about a minute under load)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Refuses(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args) -> None:
        pass


def conversation(url: str, tmp_path, monkeypatch) -> Conversation:
    monkeypatch.setenv("HA_TOKEN", "not-the-token")
    return Conversation({"router": "embedded", "dir": str(tmp_path),
                         "mcp": [{"name": "home", "url": url, "token_env": "HA_TOKEN", "timeout_s": 3,
                                  "retry_s": 60}]}, timeout_s=60)


def test_home_assistant_down_is_said_in_one_sentence(tmp_path, monkeypatch):
    c = conversation(f"http://127.0.0.1:{closed_port()}/api/mcp", tmp_path, monkeypatch)
    try:
        handled, said = c.answer("Turn off the kitchen light.")
    finally:
        c.close()
    assert not handled and said == "I can't reach Home Assistant right now.", said


def test_a_wrong_token_is_said_in_one_sentence(tmp_path, monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        c = conversation(f"http://127.0.0.1:{server.server_address[1]}/api/mcp", tmp_path, monkeypatch)
        try:
            handled, said = c.answer("Turn off the kitchen light.")
        finally:
            c.close()
    finally:
        server.shutdown()
    assert not handled and said == "I can't reach Home Assistant right now: it refused my access token.", said
