from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # trace_rules, page helpers


# Speaks, delegates, then yields the floor mid-reply: every kind of mark a timeline shows.
SCRIPT = ("1 speak Hello there.\n3 delegate What is the weather in Paris?\n"
          "4 speak This is a long answer that keeps going for quite a while, longer than two seconds.\n"
          "5 interrupt\n")


@pytest.fixture
def script(tmp_path) -> Path:
    p = tmp_path / "script.txt"
    p.write_text(SCRIPT)
    return p
