from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def script(tmp_path) -> Path:
    p = tmp_path / "script.txt"
    p.write_text("# chunk action text\n1 speak Hello there.\n3 delegate What is the weather in Paris?\n"
                 "4 speak Let me check.\n")
    return p


@pytest.fixture
def faulty_path(monkeypatch):
    """Child processes can import the faulty test nodes."""
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    monkeypatch.syspath_prepend(str(HERE))
