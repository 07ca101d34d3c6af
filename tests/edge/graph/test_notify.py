"""The supervisor tells systemd it is ready and pets the watchdog while every node is alive."""
from __future__ import annotations

import socket
import threading

from edge.session import SessionConfig, run_session


def test_ready_and_watchdog_reach_the_notify_socket(tmp_path, speech_wav, script, monkeypatch):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.1)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    got: list[str] = []
    running = threading.Event()
    running.set()

    def manager() -> None:  # reads as systemd does, while the session runs
        while running.is_set():
            try:
                got.append(sock.recv(1024).decode())
            except socket.timeout:
                continue

    reader = threading.Thread(target=manager, daemon=True)
    reader.start()
    cfg = SessionConfig(mic=str(speech_wav), speaker="null", journal=str(tmp_path / "j"),
                        frontend=f"scripted:{script}", voice="null", realtime=True)
    assert run_session(cfg, inprocess=True).ok
    running.clear()
    reader.join()
    assert got[0].startswith("READY=1")
    assert got.count("WATCHDOG=1") >= 4  # about one a second over the session
    assert got[-1].startswith("STOPPING=1")


def test_a_manager_that_never_reads_does_not_stall_the_session(tmp_path, speech_wav, script, monkeypatch):
    """Unread datagrams fill the socket's queue after about ten; the session must end all the same."""
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    filler.setblocking(False)
    for _ in range(1024):  # fill the queue before the session starts
        try:
            filler.sendto(b"x", path)
        except BlockingIOError:
            break
    else:
        raise AssertionError("the notify socket's queue never filled")
    cfg = SessionConfig(mic=str(speech_wav), speaker="null", journal=str(tmp_path / "j"),
                        frontend=f"scripted:{script}", voice="null", realtime=True)
    assert run_session(cfg, inprocess=True).ok
