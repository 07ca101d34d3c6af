"""Harness settings and config files: every bad input gets one sentence."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from edge.harness.assemble import build_router
from edge.harness.chat import build_chat
from edge.harness.settings import HarnessSettings, load_harness_config


def test_defaults_follow_the_reference():
    s = HarnessSettings.from_dict({})
    assert (s.max_running, s.ttl_s, s.context_s, s.retention_s, s.max_frames, s.select_frames) == (8, 600, 12, 60,
                                                                                                  48, 12)
    assert (s.gate.gap_base_ms, s.gate.gap_min_ms, s.gate.priority_after_ms, s.gate.chars_per_s) == (800, 250,
                                                                                                     8000, 4)
    assert HarnessSettings.from_dict({"max_running": 2, "gate": {"hold_ms": 100}}).gate.hold_ms == 100


@pytest.mark.parametrize("body,match", [
    ("{nope", "not valid JSON"), ("[1]", "must be a JSON object"),
    (json.dumps({"max_runing": 3}), "unknown harness setting"),
])
def test_bad_config_files(tmp_path, body, match):
    p = tmp_path / "h.json"
    p.write_text(body)
    with pytest.raises(ValueError, match=match):
        load_harness_config(str(p))
    with pytest.raises(ValueError, match="does not exist"):
        load_harness_config(str(tmp_path / "missing.json"))


def test_bad_router_and_chat_specs():
    with pytest.raises(ValueError, match="unknown router"):
        build_router("magic")
    with pytest.raises(ValueError, match="needs either 'url'"):
        build_chat({"endpoint": "x"})
    with pytest.raises(ValueError, match="must start with http"):
        build_chat({"url": "ftp://x"})
    with pytest.raises(ValueError, match="does not exist"):
        build_chat({"gguf": "/nonexistent.gguf"})


def test_cli_refuses_a_bad_harness_file_in_one_sentence(tmp_path):
    p = tmp_path / "h.json"
    p.write_text(json.dumps({"retries": 1, "colour": "red"}))
    (tmp_path / "in.wav").write_bytes(b"")  # never read: the config is refused first
    r = subprocess.run([sys.executable, "-m", "edge.cli", "--harness", str(p), "--mic", str(tmp_path / "in.wav")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("venus-edge: unknown harness setting(s) colour")
    assert len(r.stderr.strip().splitlines()) == 1


def test_unknown_chat_spec():
    with pytest.raises(ValueError, match="unknown chat backend"):
        build_chat("cloud")
