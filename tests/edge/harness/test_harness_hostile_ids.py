"""A work id comes from the wire: whatever it holds, it never names a file outside the evidence folder."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from edge.harness import states as S
from harness_helpers import ScriptedCapability, advance, listen_boundaries, make_harness

HOSTILE = ["../../escaped", "/tmp/absolute-escape", "a\x00b", "x" * 5000, "..", ".", "a/../../b", "ids\\..\\win",
           "\u00e9t\u00e9/../../caf\u00e9"]


@pytest.mark.parametrize("work_id", HOSTILE)
def test_a_hostile_id_writes_and_deletes_only_inside_the_evidence_folder(tmp_path, work_id):
    root = tmp_path / "harness"
    root.mkdir()
    h, clock, em = make_harness(root, [ScriptedCapability(duration_s=1.0)])
    for k in range(5):
        h.on_audio(k * 10**9, np.full(16000, 0.1, np.float32))
    before = {p for p in tmp_path.rglob("*")}
    assert h.accept(work_id, "weather in Paris?", 4 * 10**9, 4) is True
    evidence = h.store.get(work_id).evidence
    written = {p for p in tmp_path.rglob("*")} - before
    # Only the evidence folder and one file in it: nothing beside the harness folder, nothing nested deeper.
    assert written <= {root / "evidence", root / "evidence" / os.path.basename(evidence)} | {
        p for p in written if p.parent == root and p.name.startswith("work.sqlite")}
    assert os.path.dirname(evidence) == str(root / "evidence") and len(os.path.basename(evidence)) < 80
    assert not (tmp_path / "escaped").exists() and not os.path.exists("/tmp/absolute-escape")
    assert stat.S_IMODE(os.stat(evidence).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(root / "evidence").st_mode) == 0o700
    rel = listen_boundaries(h, clock, 8)[0]
    h.on_delivered(work_id, rel.release_id)
    assert h.store.get(work_id).state == S.DELIVERED
    assert not os.path.exists(evidence)  # the task's own evidence went with it


def test_two_ids_never_share_an_evidence_file(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability()])
    h.on_audio(0, np.full(16000, 0.1, np.float32))
    h.accept("a/b", "one", 10**9, 1)
    h.accept("a_b", "two", 10**9, 1)
    assert h.store.get("a/b").evidence != h.store.get("a_b").evidence


def test_a_stored_evidence_path_outside_the_folder_is_never_deleted(tmp_path):
    """A store edited (or restored) to point elsewhere cannot make the harness delete that file."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    h, clock, em = make_harness(tmp_path / "h", [ScriptedCapability()])
    h.accept("w", "weather?", 0, 0)
    h.store.update("w", evidence=str(outside))
    h.cancel("w")
    advance(h, clock, 1)
    assert h.store.get("w").state == S.CANCELLED and outside.read_text() == "keep me"
