"""Requests the observer's HTTP server must answer without a traceback, and the addresses it serves on."""
from __future__ import annotations

import http.client
import logging
import socket

import pytest

from edge.observe.observer import Observer
from edge.observe.server import ObserveServer, parse_address


def _get(host: str, port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=5)
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, body


def test_an_event_number_of_5000_digits_is_a_400_and_one_warning_line(caplog, capfd):
    server = ObserveServer(Observer(), "127.0.0.1", 0)
    try:
        host, port = server.httpd.server_address[:2]
        with caplog.at_level(logging.WARNING, logger="edge.observe"):
            answers = [_get(host, port, "/events?after=" + "9" * 5000) for _ in range(5)]
            status, _ = _get(host, port, "/health")
    finally:
        server.close()
    assert all(code == 400 for code, _ in answers), answers
    assert b"event number" in answers[0][1]
    assert status in (200, 503)  # the server still answers after the bad requests
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ValueError" not in err
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 5 and all("\n" not in r.getMessage() for r in warnings)
    assert all(len(r.getMessage()) < 200 for r in warnings)  # the digits are cut, not echoed


def test_a_header_event_id_that_is_not_a_number_is_a_400():
    server = ObserveServer(Observer(), "127.0.0.1", 0)
    try:
        host, port = server.httpd.server_address[:2]
        conn = http.client.HTTPConnection(host, port, timeout=5)
        conn.request("GET", "/events", headers={"Last-Event-ID": "12x"})
        status = conn.getresponse().status
        conn.close()
    finally:
        server.close()
    assert status == 400


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_the_ipv6_loopback_is_served():
    host, port = parse_address("[::1]:0")
    server = ObserveServer(Observer(), host, port)
    try:
        bound = server.httpd.server_address[1]
        assert server.url == f"http://[::1]:{bound}"
        status, body = _get("::1", bound, "/health")
    finally:
        server.close()
    assert status in (200, 503) and b"status" in body
