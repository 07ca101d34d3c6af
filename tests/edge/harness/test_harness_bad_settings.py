"""Bad harness settings through the real command line: one sentence each, never a traceback; a skill manifest
that is not UTF-8 is skipped while the others load."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from edge.harness.skills import load_skills

BAD = [
    ({"max_running": "lots"}, "the harness setting max_running is \"lots\"; it must be a whole number"),
    ({"timeouts": [1, 2]}, "the harness setting timeouts is [1, 2]; it must be a JSON object"),
    ({"gate": "x"}, "the harness setting gate is \"x\"; it must be a JSON object"),
    ({"skills": 5}, "the harness setting skills is 5; it must be a string"),
    ({"max_running": 0}, "the harness setting max_running is 0; it must be at least 1"),
    ({"timeouts": {"general": -3}}, "the harness setting timeouts.general is -3; it must be more than 0"),
    ({"gate": {"hold_ms": "long"}}, "the harness setting gate.hold_ms is \"long\"; it must be a number"),
    ({"gate": {"hold": 1}}, "unknown harness setting(s) gate.hold; known:"),
    ({"mcp": [{"name": "srv", "command": "srv", "env": {"TOKEN": 5}}]},
     "the MCP server srv's env TOKEN is 5; it must be text."),
]


def run_cli(tmp_path, body: bytes) -> subprocess.CompletedProcess:
    p = tmp_path / "h.json"
    p.write_bytes(body)
    (tmp_path / "in.wav").write_bytes(b"")  # never read: the settings are refused first
    return subprocess.run([sys.executable, "-m", "edge.cli", "--harness", str(p), "--mic", str(tmp_path / "in.wav")],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("cfg,sentence", BAD, ids=[json.dumps(c) for c, _ in BAD])
def test_a_bad_setting_is_one_sentence_from_the_cli(tmp_path, cfg, sentence):
    r = run_cli(tmp_path, json.dumps(cfg).encode())
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().startswith(f"venus-edge: {sentence}"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_a_harness_file_that_is_not_utf8_is_one_sentence_from_the_cli(tmp_path):
    r = run_cli(tmp_path, '{"progress_text": "d\u00e9j\u00e0"}'.encode("latin-1"))
    assert r.returncode == 2
    assert "is not UTF-8 text (byte 20); save it as UTF-8" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_good_settings_still_pass(tmp_path):
    from edge.harness.settings import load_harness_config
    p = tmp_path / "h.json"
    p.write_text(json.dumps({"max_running": 2, "timeouts": {"general": 20}, "gate": {"hold_ms": 100},
                             "skills": str(tmp_path), "chat": {"url": "http://127.0.0.1:1"}, "retries": 0,
                             "mcp": [{"name": "f", "command": "srv", "args": ["-v"], "env": {"A": "b"}}]}))
    assert load_harness_config(str(p))["max_running"] == 2


def test_a_skill_manifest_that_is_not_utf8_is_skipped_and_the_others_load(tmp_path):
    root = tmp_path / "skills"
    (root / "latin").mkdir(parents=True)
    (root / "latin" / "skill.json").write_bytes('{"name": "latin", "description": "caf\u00e9"}'.encode("latin-1"))
    (root / "ok").mkdir()
    (root / "ok" / "skill.json").write_text(json.dumps({
        "name": "ok", "version": "1", "description": "Answers.", "arguments": {"type": "object"},
        "entry": {"command": [sys.executable, "-c", "print('fine')"]}}))
    skills, problems = load_skills(root)
    assert [s.name for s in skills] == ["ok"]
    assert problems == ["skill latin: skill.json is not UTF-8 text (byte 37); save it as UTF-8"]
