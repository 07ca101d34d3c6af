"""`venus-edge bench memory` on a few generated minutes, through the real command line."""
from __future__ import annotations

import re

import numpy as np
import pytest

from edge.cli import main


def test_the_memory_bench_keeps_every_scene_change_and_answers_from_memory(capsys, tmp_path):
    pytest.importorskip("rapidocr_onnxruntime")
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


def test_the_memory_bench_on_an_omni_bundle_stores_vision_tokens_and_retrieves_by_maxsim(capsys, tmp_path,
                                                                                         omni_bundle):
    assert main(["bench", "memory", "--minutes", "6", "--scene-seconds", "15", "25", "--baseline-frames", "2",
                 "--dir", str(tmp_path), "--bundle", str(omni_bundle)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    last = re.fullmatch(r"memory: kept (\d+)% \((\d+) MB/hour\), gate ([\d.]+) ms/frame, recall@5 (\d+)% "
                        r"over (\d+) questions, answer (\d+)% \(bundle\)", out[-1])
    assert last, out[-1]
    assert int(last[5]) >= 4
    assert any(line.startswith("retrieval (MaxSim of question tokens on vision tokens)") for line in out)
    # Untrained, the question's words find nothing in particular; a fresh view of the scene finds its frames.
    by_picture = next(line for line in out if line.startswith("retrieval by picture"))
    assert int(re.search(r"recall@5 (\d+)%", by_picture)[1]) >= 80, by_picture
    # Every kept frame is stored with the encoder's 64 tokens per frame, and no text description.
    stored = sorted(tmp_path.glob("*.npy"))
    assert stored and len(stored) == len(list(tmp_path.glob("*.jpg")))
    first = np.load(stored[0])
    assert first.shape[0] == 64 and first.shape[1] > 1 and np.isfinite(first).all() and first.std() > 0
    assert '"description": ""' in (tmp_path / "index.jsonl").read_text()


def test_the_memory_bench_refuses_a_folder_that_is_no_bundle_in_one_sentence(tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(["bench", "memory", "--minutes", "1", "--bundle", str(tmp_path / "missing")])
    assert "is not a directory" in str(stop.value) and "Traceback" not in str(stop.value)
