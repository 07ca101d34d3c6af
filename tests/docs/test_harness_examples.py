"""Every harness settings file the guides show is one the harness accepts as written: a JSON block of the docs or
the README that names a harness section (`mcp`, `chat`, `router`) passes the same check a session runs at its start,
so a setting renamed or refused in the code cannot stay in the guides."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from edge.harness.settings import check_harness

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
HARNESS = ("mcp", "chat", "router")


def harness_examples() -> list[tuple[str, dict]]:
    found = []
    for page in PAGES:
        for block in re.findall(r"^```json\n(.*?)^```", page.read_text(), flags=re.M | re.S):
            cfg = json.loads(block)
            if isinstance(cfg, dict) and any(k in cfg for k in HARNESS):
                found.append((page.relative_to(ROOT).as_posix(), cfg))
    return found


EXAMPLES = harness_examples()


def test_the_guides_show_harness_settings():
    assert {page for page, _ in EXAMPLES} >= {"docs/guides/harness.md", "docs/guides/home-assistant.md"}


@pytest.mark.parametrize("page,cfg", EXAMPLES, ids=[page for page, _ in EXAMPLES])
def test_each_harness_example_is_accepted_as_written(page, cfg):
    check_harness(cfg)
