"""Typed text reaches a bundle's model: `--prompt TEXT`, and text typed into the `--http` page during a session.

Both run the real command line (`python -m edge.cli --bundle ...`) on the tiny Omni bundle. The text enters
a unit after its audio as plain tokens, so the unit it enters prefills that many more positions than the
same unit without it, and the session's journal records what was typed.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from edge import messages as m
from edge.timeline.journal import Journal
from repo_paths import ROOT

pytestmark = pytest.mark.slow
TEXT = "Please remember the blue door."


def quiet(path: Path, seconds: int) -> Path:
    sf.write(str(path), np.zeros(16000 * seconds, np.int16), 16000, subtype="PCM_16")
    return path


def cli(bundle: Path, journal: Path, mic: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "edge.cli", "--bundle", str(bundle), "--mic", str(mic), "--speaker", "null",
           "--voice", "null", "--journal", str(journal), "--answer-wait", "0", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def prefills(journal: Path) -> dict[int, int]:
    return {msg.index: msg.info["prefill"] for _, msg in Journal(journal).messages(m.ChunkDecision)}


def test_prompt_enters_the_first_unit(omni_bundle, tmp_path):
    mic = quiet(tmp_path / "mic.wav", 3)
    runs = {}
    for name, extra in (("plain", ()), ("prompt", ("--prompt", TEXT))):
        proc = cli(omni_bundle, tmp_path / f"{name}.journal", mic, "--fast", *extra)
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        runs[name] = prefills(tmp_path / f"{name}.journal")
    plain, prompted = runs["plain"], runs["prompt"]
    assert prompted[0] > plain[0], "the first unit did not read the prompt"
    assert all(prompted[k] == plain[k] for k in plain if k > 0), "the prompt entered more than one unit"


def test_prompt_needs_a_bundle(tmp_path):
    done = subprocess.run([sys.executable, "-m", "edge.cli", "--prompt", TEXT, "--frontend", "null",
                           "--mic", str(quiet(tmp_path / "mic.wav", 1))], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "--bundle" in done.stderr


def _post(url: str, body: bytes) -> tuple[int, str]:
    req = urllib.request.Request(url, body, {"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())["message"]
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())["message"]


def test_text_typed_on_the_http_page_enters_the_next_unit(omni_bundle, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    journal = tmp_path / "s.journal"
    proc = cli(omni_bundle, journal, quiet(tmp_path / "mic.wav", 8), "--http", f"127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if json.loads(r.read())["status"] == "ready":
                        break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.2)
        page = urllib.request.urlopen(base + "/", timeout=5).read().decode()
        assert 'id="typed"' in page and '"/type"' in page, "the page has no box to type in"
        assert _post(base + "/type", b"{not json") == (400, "the body must be JSON with a string field text")
        assert _post(base + "/type", json.dumps({"text": "  "}).encode()) == (400, "nothing was typed")
        time.sleep(2.5)  # a few chunks into the session: the text enters a later unit, not the first
        assert _post(base + "/type", json.dumps({"text": TEXT}).encode()) == (202, "sent to the model")
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    typed = [msg.text for _, msg in Journal(journal).messages(m.TypedText)]
    assert typed == [TEXT]
    counts = prefills(journal)
    usual = int(np.median(list(counts.values())))
    longer = [k for k, n in counts.items() if n > usual and k > 0]
    assert len(longer) == 1, f"the typed text should enter exactly one later unit: {counts}"
