"""Retention on an always-on device: old sessions go by age and size, finished work items beyond the newest go."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from edge import messages as m
from edge.harness.store import WorkItem, WorkStore, prune_finished
from edge.timeline.journal import Journal, JournalWriter
from edge.timeline.retention import Retention, prune_sessions
from edge.wire import encode

DAY = 86400.0


def session(folder: Path, name: str, age_days: float, audio_s: float, items: int = 0) -> Path:
    """A journal as the recorder writes it (session record, then audio chunks), and its harness store."""
    path = folder / f"{name}.journal"
    w = JournalWriter(path, {"kind": "venus-edge-session", "config": {"journal": str(path)}})
    pcm = b"\0\0" * 16000
    for i in range(int(audio_s)):
        msg = m.AudioChunk(i, i * 10**9, (i + 1) * 10**9, 16000, 16000)
        w.append(i * 10**9, encode(msg, seq=i, epoch=0, t_ns=i * 10**9, src="capture", payload=[pcm]))
    w.close()
    if items:
        store = WorkStore(Path(f"{path}.harness") / "work.sqlite")
        for i in range(items):
            store.add(WorkItem(f"w{i}", "what is the time", 0, 0, 0, 10**12), 0)
        store.close()
    stamp = time.time() - age_days * DAY
    os.utime(path, (stamp, stamp))
    return path


def test_old_sessions_go_then_the_oldest_until_the_rest_fit(tmp_path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    ancient = session(folder, "a", age_days=30, audio_s=1, items=2)
    older = session(folder, "b", age_days=3, audio_s=20)  # about 640 kB each
    newer = session(folder, "c", age_days=2, audio_s=20)
    newest = session(folder, "d", age_days=1, audio_s=20)
    active = folder / "e.journal"  # the session about to start
    removed = prune_sessions(folder, Retention(max_age_days=7, max_total_mb=1.5), active=active)
    assert removed == [ancient, older]
    assert not ancient.exists() and not Path(f"{ancient}.harness").exists()  # its store and evidence went with it
    assert newer.exists() and newest.exists()
    assert Journal(newest).session["kind"] == "venus-edge-session"  # what stays is untouched
    assert prune_sessions(folder, Retention(max_age_days=7, max_total_mb=1.5)) == []


def test_the_running_session_is_never_removed(tmp_path) -> None:
    running = session(tmp_path, "now", age_days=30, audio_s=40)
    assert prune_sessions(tmp_path, Retention(max_age_days=1, max_total_mb=0.01), active=running) == []
    assert running.exists()


def test_the_stores_that_stay_are_pruned_by_the_pruning_handed_in(tmp_path) -> None:
    kept = session(tmp_path, "kept", age_days=1, audio_s=1, items=3)
    store = WorkStore(Path(f"{kept}.harness") / "work.sqlite")
    for i in range(3):
        store.transition(f"w{i}", "cancelled", 10 + i)
    store.close()
    assert prune_sessions(tmp_path, Retention(keep_finished=1), prune_store=prune_finished) == []
    store = WorkStore(Path(f"{kept}.harness") / "work.sqlite")
    assert [i.id for i in store.all()] == ["w2"]  # the newest finished item only
    store.close()


def test_finished_work_items_beyond_the_newest_go_and_owed_ones_stay(tmp_path) -> None:
    store = WorkStore(tmp_path / "work.sqlite")
    for i in range(6):
        store.add(WorkItem(f"w{i}", f"question {i}", 0, i, i, 10**12), i)
    for i in range(4):  # four finished, oldest first
        store.transition(f"w{i}", "cancelled", 10 + i)
    store.transition("w4", "failed", 20, notice="I could not reach the weather service.", notice_state="pending")
    assert prune_finished(store.path, keep=1) == 3
    left = {i.id: i.state for i in store.all()}
    # the newest finished item stays; a failure the user has not heard about yet and a queued one stay
    assert left == {"w3": "cancelled", "w4": "failed", "w5": "queued"}
    assert {e[0] for e in store.events()} == {"w3", "w4", "w5"}  # their history went with them
    store.add(WorkItem("w6", "new question", 0, 6, 6, 10**12), 6)  # the live store still works
    store.close()


@pytest.mark.parametrize("bad", [dict(max_age_days=0), dict(max_total_mb=-1), dict(keep_finished=-2)])
def test_bad_settings_are_one_sentence(bad) -> None:
    with pytest.raises(ValueError, match="journal retention needs"):
        Retention(**bad)
