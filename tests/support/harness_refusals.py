"""Harness settings the session refuses before any node starts: what the command line and the builder say."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edge.session import SessionConfig, SettingsError, make_supervisor, nodes_for


def refused_on_the_command_line(tmp_path: Path, harness: dict) -> str:
    """`venus-edge --harness FILE` with `harness` in FILE: exits 2; returns what it printed on stderr."""
    p = tmp_path / "h.json"
    p.write_text(json.dumps(harness))
    (tmp_path / "in.wav").write_bytes(b"")  # never read: the settings are refused first
    r = subprocess.run([sys.executable, "-m", "edge.cli", "--harness", str(p), "--mic", str(tmp_path / "in.wav")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    return r.stderr.strip()


def refused_by_the_session(harness: dict) -> str:
    """A session given `harness` is refused by its builder (SettingsError); returns the sentence."""
    cfg = SessionConfig(mic="in.wav", voice="null", extra={"harness": harness})
    with pytest.raises(SettingsError) as err:
        make_supervisor(cfg, nodes_for(cfg))
    return str(err.value)
