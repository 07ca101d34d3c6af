"""The live timeline page in a real headless Chromium, opened while a scripted session runs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from live import get, start_live

from edge.session import SessionConfig
from repo_paths import SUPPORT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="the page test needs Chromium (apt-get install chromium; "
                                                         "scripts/setup.sh installs it)")


def chromium(tmp_path: Path, url: str, *extra: str) -> str:
    profile = tmp_path / f"profile-{time.monotonic_ns()}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--virtual-time-budget=60000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True).stdout


def test_the_page_shows_decisions_work_items_and_a_restart(tmp_path, speech_wav, marks_script, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("CRASH_ONCE_MARKER", str(tmp_path / "crashed"))
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "o.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{marks_script}", voice="espeak", realtime=True,
                        answer_wait_s=0.0)  # ends with the file, before the failed work's notice is said
    live = start_live(cfg, node_classes={"harness": "crash_nodes:CrashOnceHarness"})
    deadline = time.monotonic() + 60
    while json.loads(get(live.server.url + "/health")[1])["status"] != "ready" and time.monotonic() < deadline:
        time.sleep(0.05)
    # Opened while the session runs: what follows reaches the page over its event stream.
    dom = chromium(tmp_path, live.server.url + "/", "--dump-dom")
    report = live.finish()
    assert report.ok, report.reason
    assert report.restarts["harness"] == 1
    assert 'data-kind="chunk" data-control="speak" data-index="1"' in dom and "said: Hello there." in dom
    assert 'data-control="speak" data-index="4"' in dom
    assert 'data-index="5"' in dom and "yields the floor" in dom and 'data-kind="interrupt"' in dom
    assert 'data-states="captured queued running failed"' in dom  # the work item, captured to its end
    assert 'data-event="crashed"' in dom and "harness spawned (restart 1)" in dom
    assert "session ended: complete" in dom
    # A picture of the page for the test's artifacts (the session is over, so the page shows all of it).
    shot = tmp_path / "timeline.png"
    chromium(tmp_path, live.server.url + "/", f"--screenshot={shot}", "--window-size=1280,900")
    live.server.close()
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
