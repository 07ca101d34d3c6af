"""The supervisor tells systemd it is ready and pets the watchdog while every node is alive."""
from __future__ import annotations

import socket

from edge.session import SessionConfig, run_session


def test_ready_and_watchdog_reach_the_notify_socket(tmp_path, speech_wav, script, monkeypatch):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.1)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    cfg = SessionConfig(mic=str(speech_wav), speaker="null", journal=str(tmp_path / "j"),
                        frontend=f"scripted:{script}", voice="null", realtime=True)
    assert run_session(cfg, inprocess=True).ok
    got = []
    while True:
        try:
            got.append(sock.recv(1024).decode())
        except socket.timeout:
            break
    assert got[0].startswith("READY=1")
    assert got.count("WATCHDOG=1") >= 4  # about one a second over a 6 s session
    assert got[-1].startswith("STOPPING=1")
