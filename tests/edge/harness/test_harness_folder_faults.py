"""The harness folder on a full disk, or not writable: delegation stops in words, the session goes on, nothing
saved is lost, and work takes up again once the folder can be written."""
from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from edge.clock import VirtualClock
from edge.harness import store as store_module
from edge.harness.capability import Outcome, Registry
from edge.harness.core import Harness
from edge.harness.outage import AGAIN, WHY_REFUSED
from edge.harness.router import ScriptedRouter
from edge.harness.store import StoreUnwritable, WorkItem, WorkStore
from edge.nodes import harness as harness_node_module
from fault_session import ROOT
from filling_disk import SQLITE_FULL, Disk, FillingDatabase
from harness_on_a_disk import S, ask, harness_node
from waiting import until


class Waits:
    """Answers after a second of session time."""

    name, description, instructions, timeout_s = "lookup", "Waits, then answers.", "", 30.0
    schema = {"type": "object"}

    def run(self, arguments, ctx) -> Outcome:
        ctx.sleep(1.0)
        return Outcome("It is sunny in Paris.")


def test_a_task_whose_next_state_a_full_disk_refuses_runs_again_once_there_is_room(tmp_path, caplog):
    disk, clock, said = Disk(), VirtualClock(), []
    registry = Registry()
    registry.add(Waits())
    store = WorkStore(tmp_path / "work.sqlite")
    store.db = FillingDatabase(store.db, disk)  # type: ignore[assignment]
    h = Harness(store, registry, ScriptedRouter([], default="lookup"), clock, said.append)
    h.accept("w", "What is the weather in Paris?", 0, 0)
    until(lambda: (store.get("w").capability == "lookup" and bool(h.sleepers.waiting)), "the task never started")
    disk.full = True
    with caplog.at_level(logging.WARNING):
        clock.advance(2 * S)
        h.poll()  # wakes the task: its answer cannot be stored
        until(lambda: not h.jobs, "the task's job never ended")
    assert store.get("w").state == "running" and not any(r.exc_info for r in caplog.records)  # no traceback
    with pytest.raises(StoreUnwritable, match="the disk is full"):
        h.requeue_stranded()
    disk.full = False
    assert h.requeue_stranded() == 1
    h.poll()
    until(lambda: bool(h.sleepers.waiting), "the task did not run again")
    clock.advance(2 * S)
    h.poll()
    until(lambda: store.get("w").state in ("completed", "delivering"), "the answer was never stored")
    assert store.get("w").result == "It is sunny in Paris." and store.get("w").attempts == 2
    h.close()
    store.close()


def test_a_harness_folder_that_cannot_be_made_declines_then_takes_work_once_it_can(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(harness_node_module, "RETRY_S", 0.0)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be")
    with caplog.at_level(logging.WARNING):
        node, io = harness_node(blocked / "harness", Disk(), monkeypatch)  # was "node harness could not start"
        assert node.built is None
        first, second = ask(node, io, "a", "What is 2 plus 2?"), ask(node, io, "b", "What is 3 plus 3?")
        blocked.unlink()
        node.tick()
        assert node.built is not None
        after = ask(node, io, "c", "What is 4 plus 4?")
    assert (first.text, second.text) == (WHY_REFUSED, AGAIN) and after.kind == "result" and "8" in after.text
    said = [r.getMessage() for r in caplog.records if "harness folder" in r.getMessage()]
    assert len(said) == 2 and "cannot be written (not a directory)" in said[0] and "written again" in said[1], said
    assert not any(r.exc_info for r in caplog.records)
    node.close()


def test_a_restart_on_a_full_disk_resumes_its_work_once_there_is_room(tmp_path, monkeypatch):
    left = WorkStore(tmp_path / "harness" / "work.sqlite")  # an earlier life was killed while this ran
    left.add(WorkItem("left", "What is 2 plus 2?", 0, 0, 0, 600 * S), 0)
    left.transition("left", "running", 0, attempts=1)
    left.close()
    disk = Disk()
    disk.full = True
    node, io = harness_node(tmp_path / "harness", disk, monkeypatch)  # its resume is refused: no restart loop
    assert ask(node, io, "new", "What is 3 plus 3?").kind == "failure"
    disk.full = False
    until(lambda: (node.tick(), io.results("left"))[1], "the earlier life's work was not resumed")
    assert "4" in io.results("left")[0].text
    assert node.built.harness.store.get("left").attempts == 2
    node.close()


def test_a_store_the_disk_cannot_open_is_not_taken_for_a_damaged_one(tmp_path, monkeypatch):
    path = tmp_path / "work.sqlite"
    kept = WorkStore(path)
    kept.add(WorkItem("w", "remind me", 0, 0, 0, 10 * S), 0)
    kept.close()
    connect = sqlite3.connect

    def full(*args, **kwargs):
        err = sqlite3.OperationalError("database or disk is full")
        err.sqlite_errorcode = SQLITE_FULL
        raise err
    monkeypatch.setattr(store_module.sqlite3, "connect", full)
    with pytest.raises(StoreUnwritable, match="cannot be written .the disk is full."):
        WorkStore(path)  # was moved aside as damaged, and a new empty store tried
    monkeypatch.setattr(store_module.sqlite3, "connect", connect)
    assert not list(tmp_path.glob("*.damaged-*"))
    again = WorkStore(path)
    assert [i.id for i in again.all()] == ["w"]
    again.close()


def test_a_write_the_disk_refuses_changes_nothing_and_says_why(tmp_path):
    disk = Disk()
    store = WorkStore(tmp_path / "work.sqlite")
    store.add(WorkItem("w", "x", 0, 0, 0, 10 * S), 0)
    store.db = FillingDatabase(store.db, disk)  # type: ignore[assignment]
    disk.full = True
    with pytest.raises(StoreUnwritable) as err:
        store.transition("w", "running", 1)
    assert str(err.value) == f"the harness folder {Path(tmp_path)} cannot be written (the disk is full)"
    assert err.value.full and store.refusals == 1
    assert store.get("w").state == "queued" and [e[1] for e in store.events("w")] == ["queued"]
    disk.full = False
    store.transition("w", "running", 1)
    assert store.get("w").state == "running"
    store.close()


def test_sqlites_own_full_database_is_refused_whole_and_the_store_works_once_there_is_room(tmp_path):
    store = WorkStore(tmp_path / "work.sqlite")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own SQLITE_FULL, as on a full disk
    added = []
    with pytest.raises(StoreUnwritable, match=r"cannot be written \(the disk is full\)"):
        for n in range(100):
            store.add(WorkItem(f"w{n}", "x" * 3000, 0, 0, 0, 10 * S), 0)
            added.append(f"w{n}")
    assert added and [i.id for i in store.all()] == added  # whole items only, none lost
    assert len(store.events()) == len(added)
    store.db.execute("PRAGMA max_page_count = 1000000")
    assert store.add(WorkItem("later", "x", 0, 0, 0, 10 * S), 0)
    store.close()


@pytest.mark.slow
def test_a_live_session_takes_delegation_up_again_once_its_folder_can_be_made(tmp_path):
    with wave.open(str(tmp_path / "quiet.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\0\0" * 16000 * 16)
    (tmp_path / "blocked").write_text("a file where the harness folder would be")
    (tmp_path / "h.json").write_text(json.dumps({"dir": str(tmp_path / "blocked" / "harness")}))
    (tmp_path / "script.txt").write_text("1 delegate What is 2 plus 2?\n12 delegate What is 3 plus 3?\n")
    session = subprocess.Popen(
        [sys.executable, "-m", "edge.cli", "--mic", "quiet.wav", "--frontend", "scripted:script.txt", "--speaker",
         "null", "--voice", "null", "--answer-wait", "10", "--harness", "h.json", "--journal", "s.journal"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    journal = tmp_path / "s.journal"
    until(lambda: journal.exists() and b"background work" in journal.read_bytes(), "the first request was not "
          "declined", wait_s=90)
    (tmp_path / "blocked").unlink()  # the folder can be made now: the second request is taken (12 s in)
    out, err = session.communicate(timeout=120)
    assert session.returncode == 0 and "Traceback" not in err, err[-3000:]
    from edge import messages as m
    from edge.timeline.journal import Journal
    said = [msg.text for _, msg in Journal(journal).messages(m.SpeakText) if msg.text]
    assert said == [WHY_REFUSED, "3 plus 3 is 6."], said
    told = [line for line in err.splitlines() if "harness folder" in line]
    assert len(told) == 2 and "cannot be written" in told[0] and "can be written again" in told[1], err[-3000:]
