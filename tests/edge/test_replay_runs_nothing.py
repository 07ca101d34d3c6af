"""Replaying a journal never starts what the journal names (a journal comes with bug reports)."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys

from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal


def test_a_journal_naming_a_command_replays_without_running_it(tmp_path, speech_wav, script):
    marker = tmp_path / "MARKER"
    named = {"mcp": [{"name": "evil", "command": "sh", "args": ["-c", f"touch {shlex.quote(str(marker))}"]}],
             "max_running": 4}
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{script}", voice="null", realtime=False,
                        extra={"harness": named})
    assert run_session(cfg, inprocess=True).ok
    assert marker.exists()  # the live session did start it: the journal really names a working command
    assert Journal(tmp_path / "s.journal").session["config"]["harness"]["mcp"][0]["command"] == "sh"
    marker.unlink()

    done = subprocess.run([sys.executable, "-m", "edge.cli", "replay", str(tmp_path / "s.journal"),
                           "--out", str(tmp_path / "r.journal"), "--speaker", str(tmp_path / "r.wav")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "Traceback" not in done.stderr
    assert "the recorded harness settings mcp were not run" in done.stderr and "--harness FILE" in done.stderr
    replayed = Journal(tmp_path / "r.journal").session["config"]["harness"]
    assert replayed == {"max_running": 4}  # the plain settings are kept

    own = tmp_path / "harness.json"
    own.write_text(json.dumps({"max_running": 2}))
    done = subprocess.run([sys.executable, "-m", "edge.cli", "replay", str(tmp_path / "s.journal"), "--harness",
                           str(own), "--out", str(tmp_path / "r2.journal"), "--speaker", str(tmp_path / "r2.wav")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not marker.exists() and "were not run" not in done.stderr
    assert Journal(tmp_path / "r2.journal").session["config"]["harness"] == {"max_running": 2}
