"""Nothing outlives a killed process: skills and MCP servers die with the harness, nodes with the supervisor, and
the folders a killed supervisor or replay leaves are removed at the next start. Real processes, real SIGKILL."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import soundfile as sf

from edge.graph.endpoints import PREFIX, make_endpoints, remove_runtime_dir
from edge.scratch import SETTLE_S
from edge.session import ALL_NODES, SessionConfig, make_supervisor, run_session
from edge.replay import WORK_PREFIX, replay
from skill_files import route_all_to, write_skill
from repo_paths import ROOT, SUPPORT

MCP_SERVER = SUPPORT / "mcp_server.py"


def gone(pid: int) -> bool:
    """Dead (a zombie waiting for whoever adopted it counts: it runs nothing)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_for(check, timeout_s: float, step_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(step_s)
    return check()


def hanging_skill(root: Path, pid_file: Path) -> None:
    """A skill whose first call never ends (it writes its pid first); later calls answer at once."""
    write_skill(root, "stuck", textwrap.dedent(f"""
        import os, time
        def run(arguments, context):
            if context["attempt"] == 1:
                open({str(pid_file)!r}, "w").write(str(os.getpid()))
                time.sleep(600)
            return "Done."
    """), "Hangs on the first call.", timeout_s=600)


def test_skill_and_mcp_server_die_with_a_killed_harness_and_the_session_goes_on(tmp_path):
    # The session listens on after the file until the request is answered (edge/nodes/capture_tail.py).
    sf.write(tmp_path / "in.wav", np.zeros(16000 * 4, np.float32), 16000)
    (tmp_path / "script.txt").write_text("1 delegate Do the long thing.\n")
    pid_file = tmp_path / "skill.pid"
    hanging_skill(tmp_path / "skills", pid_file)
    harness = {"skills": str(tmp_path / "skills"),
               "mcp": [{"name": "convert", "command": sys.executable, "args": [str(MCP_SERVER)]}],
               "router": route_all_to("stuck")}
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker=str(tmp_path / "out.wav"),
                        journal=str(tmp_path / "s.journal"), frontend=f"scripted:{tmp_path / 'script.txt'}",
                        voice="null", chunk_ms=500, realtime=True, extra={"harness": harness})
    sup = make_supervisor(cfg.as_dict(), ALL_NODES)
    report: dict = {}
    runner = threading.Thread(target=lambda: report.setdefault("r", sup.run()), daemon=True)
    runner.start()
    assert wait_for(pid_file.exists, 60), "the skill never started"
    harness_pid = sup.children["harness"].pid
    skill_pid = int(pid_file.read_text())
    started = {p.pid: " ".join(p.cmdline()) for p in psutil.Process(harness_pid).children(recursive=True)}
    assert skill_pid in started
    assert any(str(MCP_SERVER) in cmd for cmd in started.values()), started  # the MCP server runs too

    os.kill(harness_pid, signal.SIGKILL)
    left = wait_for(lambda: [] if all(gone(p) for p in started) else None, 2.0)
    assert left == [], {p: c for p, c in started.items() if not gone(p)}

    runner.join(90)
    assert not runner.is_alive()
    r = report["r"]
    assert r.ok, r.reason
    assert r.restarts["harness"] == 1


def runtime_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name.startswith(PREFIX))


def test_a_killed_supervisor_takes_its_nodes_and_its_folder_goes_at_the_next_start(tmp_path, monkeypatch):
    run_root = tmp_path / "run"
    run_root.mkdir(mode=0o700)
    sf.write(tmp_path / "in.wav", np.zeros(16000 * 30, np.float32), 16000)
    (tmp_path / "script.txt").write_text("1 speak Hello.\n")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run_root), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "--mic", str(tmp_path / "in.wav"), "--script",
                             str(tmp_path / "script.txt"), "--voice", "null", "--speaker", "null",
                             "--journal", str(tmp_path / "s.journal")], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        nodes = wait_for(lambda: [c.pid for c in psutil.Process(proc.pid).children()
                                  if "edge.graph.child" in " ".join(c.cmdline())]
                         if len(psutil.Process(proc.pid).children()) >= len(ALL_NODES) else None, 60)
        assert nodes and runtime_folders(run_root)  # killed while the nodes are still starting
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert wait_for(lambda: all(gone(p) for p in nodes), 2.0), "a node outlived its supervisor"
    left = runtime_folders(run_root)
    assert len(left) == 1  # a SIGKILL runs no clean-up: the next start does it

    # A folder of a session that still runs is never touched: this process holds its own.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_root))
    live = make_endpoints("ipc")
    time.sleep(max(0.0, SETTLE_S - (time.time() - left[0].stat().st_mtime)) + 0.2)
    nxt = make_endpoints("ipc")
    try:
        assert runtime_folders(run_root) == sorted([Path(live.runtime_dir), Path(nxt.runtime_dir)])
    finally:
        remove_runtime_dir(live)
        remove_runtime_dir(nxt)
    assert runtime_folders(run_root) == []


def replay_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name.startswith(WORK_PREFIX))


def test_a_killed_replay_leaves_the_recorded_input_only_until_the_next_replay(tmp_path, speech_wav, script,
                                                                              monkeypatch):
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{script}", voice="null", realtime=False,
                        answer_wait_s=0.0)  # ends with the file: a notice said after it may differ in a replay
    assert run_session(cfg, inprocess=True).ok
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "replay", str(tmp_path / "s.journal"), "--verify"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        holding = wait_for(lambda: [f for f in replay_folders(tmp) if any(f.glob("*.wav"))], 60, 0.01)
        assert holding, "the replay never wrote its input"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert replay_folders(tmp) == holding  # the recorded input is still there after the kill

    time.sleep(max(0.0, SETTLE_S - (time.time() - holding[0].stat().st_mtime)) + 0.2)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    result = replay(tmp_path / "s.journal", verify=True)
    assert result.ok, result.first_difference
    assert replay_folders(tmp) == []  # the killed replay's folder and its own are both gone
