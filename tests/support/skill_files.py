"""Skills a test's harness runs: a manifest and the Python that answers, written into a skills folder."""
from __future__ import annotations

import json
from pathlib import Path


def write_skill(root: Path, name: str, body: str, description: str = "Answers at once.", **manifest) -> Path:
    """Write skill `name` under `root`; `body` is skill.py's source, `manifest` adds or replaces skill.json keys."""
    d = root / name
    d.mkdir(parents=True)
    (d / "skill.json").write_text(json.dumps({
        "name": name, "version": "1.0", "description": description, "arguments": {"type": "object"},
        "entry": {"python": "skill.py:run"}, **manifest}))
    (d / "skill.py").write_text(body)
    return d


def returning(text: str) -> str:
    """skill.py source whose run() answers `text`."""
    return f"def run(arguments, context):\n    return {text!r}\n"


def route_all_to(name: str) -> dict:
    """The harness router setting that sends every request to skill `name`."""
    return {"scripted": {"rules": [{"match": ".", "capability": name, "arguments": {}}]}}
