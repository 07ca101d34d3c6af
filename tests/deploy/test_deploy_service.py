"""service.py: profile refusal, the sd_notify relay and the watchdog fallback, with a fake systemd socket."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deploy_support import load_jetson, JETSON, REPO

service = load_jetson("service")

NOTIFYING_RUNTIME = """
import os, socket, sys, time
assert "WATCHDOG_PID" not in os.environ and os.environ["WATCHDOG_USEC"] == "100000"
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
addr = os.environ["NOTIFY_SOCKET"]
s.sendto(b"READY=1", addr)
for _ in range(5):
    s.sendto(b"WATCHDOG=1", addr)
    time.sleep(0.1)
print("args:", sys.argv[1:], flush=True)
"""
SILENT_RUNTIME = "import time, sys; time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)"


class FakeSystemd:
    """systemd's notify socket: a datagram socket read by a thread, as systemd reads it."""

    def __init__(self, tmp_path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.path = str(tmp_path / "notify")
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.messages: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self.stop.is_set():
            try:
                self.messages.append(self.sock.recv(4096).decode())
            except socket.timeout:
                continue

    def received(self) -> list[str]:
        time.sleep(0.1)
        self.stop.set()
        self.thread.join()
        return self.messages


def start(tmp_path: Path, script: str, env: dict[str, str], args: str = "") -> subprocess.Popen:
    runtime = tmp_path / "runtime.py"
    runtime.write_text(script)
    full = {k: v for k, v in os.environ.items() if not k.startswith("VENUS_")}
    full.update(PYTHONPATH=str(REPO), VENUS_EDGE_BIN=sys.executable, VENUS_ARGS=f"{runtime} {args}",
                VENUS_READY_AFTER_S="0.3")
    full.update(env)
    return subprocess.Popen([sys.executable, str(JETSON / "service.py")], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_runtime_messages_are_relayed_and_win(tmp_path) -> None:
    systemd = FakeSystemd(tmp_path)
    p = start(tmp_path, NOTIFYING_RUNTIME, {"NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "100000",
                                            "WATCHDOG_PID": str(os.getpid())})
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    msgs = systemd.received()
    # the runtime's own READY and heartbeats reach systemd; the wrapper adds no READY of its own
    assert msgs.count("READY=1") == 1 and msgs.count("WATCHDOG=1") >= 5
    assert not any("STATUS=" in m for m in msgs)


def test_fallback_ready_and_watchdog_while_alive(tmp_path) -> None:
    systemd = FakeSystemd(tmp_path)
    p = start(tmp_path, SILENT_RUNTIME, {"NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "200000"}, args="1.2")
    p.communicate(timeout=30)
    msgs = systemd.received()
    assert any(m.startswith("READY=1") for m in msgs)
    # pings every 0.1 s (half the watchdog period) for about 1.2 s
    assert 5 <= msgs.count("WATCHDOG=1") <= 14


def test_exit_code_passes_through(tmp_path) -> None:
    p = start(tmp_path, "import sys; sys.exit(3)", {})
    p.communicate(timeout=30)
    assert p.returncode == 3


def test_profile_that_does_not_fit_is_refused_with_numbers(tmp_path) -> None:
    profile = dict(line.split("=", 1) for line in (JETSON / "profiles" / "orin-nano-4.env").read_text().splitlines()
                   if line and not line.startswith("#"))
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:        3560000 kB\n")  # an Orin Nano 4GB: 3.4 GiB
    p = start(tmp_path, SILENT_RUNTIME, {**profile, "VENUS_MEMINFO": str(meminfo)})
    _, err = p.communicate(timeout=30)
    assert p.returncode == service.EX_CONFIG  # the unit's RestartPreventExitStatus: no restart loop
    assert err.startswith("venus-edge refuses to start: profile orin-nano-4") and "GB short" in err


def test_missing_runtime_is_one_sentence(tmp_path) -> None:
    p = start(tmp_path, "", {"VENUS_EDGE_BIN": str(tmp_path / "no-such-venus-edge")})
    _, err = p.communicate(timeout=30)
    assert p.returncode == service.EX_CONFIG and "run setup.sh first" in err


def test_profile_flags_only_when_the_runtime_offers_them(tmp_path) -> None:
    env = {"VENUS_EDGE_BIN": "venus-edge", "VENUS_ARGS": "--mic 'USB Audio' --context=2048",
           "VENUS_CONTEXT": "4096", "VENUS_VISION_FPS": "0.5", "VENUS_BUNDLE": str(tmp_path),
           "VENUS_VOICE": f"bundle:{tmp_path}"}
    argv = service.runtime_argv(env, help_text="  --mic M  --video-fps F  --context N  --list-devices")
    # --context is already given; --bundle is not offered by this runtime
    assert argv == ["venus-edge", "--mic", "USB Audio", "--context=2048", "--video-fps", "0.5"]
    offers = "  --bundle DIR  --voice V  --mic M"
    # an empty bundle folder (nothing staged yet): the embedded default runs
    assert service.runtime_argv(env, help_text=offers) == ["venus-edge", "--mic", "USB Audio", "--context=2048"]
    (tmp_path / "manifest.json").write_text("{}")
    argv = service.runtime_argv(env, help_text=offers)
    assert argv[-4:] == ["--bundle", str(tmp_path), "--voice", f"bundle:{tmp_path}"]
    with pytest.raises(SystemExit, match="not valid shell quoting"):
        service.runtime_argv({"VENUS_ARGS": "--mic 'unclosed"}, help_text="")


def test_watchdog_period_is_half_of_systemds() -> None:
    assert service.watchdog_period({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert service.watchdog_period({}) is None
