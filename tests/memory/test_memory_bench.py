"""`venus-edge bench memory` on a few generated minutes, through the real command line."""
from __future__ import annotations

import re

import pytest

from edge.cli import main

pytest.importorskip("rapidocr_onnxruntime")


def test_the_memory_bench_keeps_every_scene_change_and_answers_from_memory(capsys, tmp_path):
    assert main(["bench", "memory", "--minutes", "4", "--scene-seconds", "30", "60", "--baseline-frames", "3",
                 "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    last = re.fullmatch(r"memory: kept (\d+)% \((\d+) MB/hour\), gate ([\d.]+) ms/frame, recall@5 (\d+)% "
                        r"over (\d+) questions, answer (\d+)% \(embedded\)", out[-1])
    assert last, out[-1]
    kept, _, _, recall, questions, answered = (float(g) for g in last.groups())
    gate = next(line for line in out if line.startswith("gate: kept"))
    changes = re.search(r"(\d+)/(\d+) scene changes kept", gate)
    assert changes[1] == changes[2]                                  # every true scene change is kept
    # At most 4 drops in a row put the floor at one static frame in five; where a stretch begins
    # mid-count it may keep one more, hence the small margin.
    assert float(re.search(r"([\d.]+)% of static seconds", gate)[1]) <= 21
    assert kept < 35 and questions >= 4
    assert recall >= 90 and answered >= 80
    assert (tmp_path / "index.jsonl").exists() and list(tmp_path.glob("*.jpg"))
