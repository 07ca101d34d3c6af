"""The work-item store: every allowed transition, refused ones, idempotent intake, durability."""
from __future__ import annotations

import logging
import os
import stat

import pytest

from edge.harness import states as S
from edge.harness.store import StoreError, WorkItem, WorkStore


def item(i: str) -> WorkItem:
    return WorkItem(i, "do it", 0, 0, 0, 10**12)


def test_every_allowed_transition_is_stored_and_journalled(tmp_path):
    store = WorkStore(tmp_path / "w.sqlite")
    n = 0
    for old, news in S.TRANSITIONS.items():
        for new in news:
            n += 1
            wid = f"{old}-{new}"
            store.add(item(wid), 0)
            path = {S.QUEUED: [], S.RUNNING: [S.RUNNING], S.CANCELLING: [S.RUNNING, S.CANCELLING],
                    S.COMPLETED: [S.RUNNING, S.COMPLETED], S.DELIVERING: [S.RUNNING, S.COMPLETED, S.DELIVERING]}[old]
            for step in path:
                store.transition(wid, step, 1)
            tr = store.transition(wid, new, 2, "why")
            assert (tr.old, tr.new, tr.item.state) == (old, new, new)
            assert store.events(wid)[-1] == (wid, new, "why", 2)
    assert n == sum(len(v) for v in S.TRANSITIONS.values()) >= 15


@pytest.mark.parametrize("old,new", [(S.QUEUED, S.DELIVERED), (S.DELIVERED, S.DELIVERING), (S.FAILED, S.QUEUED),
                                     (S.CANCELLED, S.RUNNING), (S.QUEUED, S.COMPLETED)])
def test_forbidden_transitions_are_refused_and_change_nothing(tmp_path, old, new):
    store = WorkStore(tmp_path / "w.sqlite")
    store.add(item("a"), 0)
    for step in {S.QUEUED: [], S.DELIVERED: [S.RUNNING, S.COMPLETED, S.DELIVERING, S.DELIVERED],
                 S.FAILED: [S.FAILED], S.CANCELLED: [S.CANCELLED]}[old]:
        store.transition("a", step, 1)
    before = store.events("a")
    with pytest.raises(ValueError, match=f"cannot go from {old} to {new}"):
        store.transition("a", new, 2)
    assert store.get("a").state == old and store.events("a") == before


def test_intake_is_idempotent_and_survives_reopening(tmp_path):
    store = WorkStore(tmp_path / "w.sqlite")
    assert store.add(item("a"), 0) is True
    assert store.add(item("a"), 5) is False  # a re-sent delegate request
    store.transition("a", S.RUNNING, 3, attempts=1)
    # No close: a killed process never closes its connection.
    again = WorkStore(tmp_path / "w.sqlite")
    got = again.get("a")
    assert got.state == S.RUNNING and got.attempts == 1
    assert [e[1] for e in again.events("a")] == [S.QUEUED, S.RUNNING]


def test_unknown_fields_and_items_get_one_sentence(tmp_path):
    store = WorkStore(tmp_path / "w.sqlite")
    with pytest.raises(StoreError, match="no work item"):
        store.transition("nope", S.RUNNING, 0)
    store.add(item("a"), 0)
    with pytest.raises(StoreError, match="unknown work-item field"):
        store.transition("a", S.RUNNING, 0, colour="red")


def test_a_corrupt_store_is_kept_aside_and_a_fresh_one_used_saying_so_once(tmp_path, caplog):
    bad = tmp_path / "w.sqlite"
    junk = b"this is not a database" * 100
    bad.write_bytes(junk)
    with caplog.at_level(logging.WARNING, logger="edge.harness.store"):
        store = WorkStore(bad)
    assert len(caplog.records) == 1 and "damaged" in caplog.records[0].getMessage()
    assert store.moved_aside is not None and store.moved_aside.read_bytes() == junk  # nothing lost
    assert store.moved_aside.parent == tmp_path and store.moved_aside.name.startswith("w.sqlite.damaged-")
    store.add(item("a"), 0)  # the fresh store works
    assert store.get("a").state == S.QUEUED
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="edge.harness.store"):
        again = WorkStore(bad)  # the next start finds the fresh store healthy: nothing more is said
    assert again.moved_aside is None and again.get("a") is not None and caplog.records == []


def test_a_store_torn_mid_page_is_kept_aside_too(tmp_path):
    path = tmp_path / "w.sqlite"
    store = WorkStore(path)
    for k in range(200):
        store.add(item(f"w{k}"), 0)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.db.close()
    data = bytearray(path.read_bytes())
    data[4096 * 2:4096 * 2 + 512] = b"\xff" * 512  # a torn write in a page of items
    path.write_bytes(bytes(data))
    fresh = WorkStore(path)
    assert fresh.moved_aside is not None and fresh.get("w0") is None


def test_the_store_is_readable_by_its_owner_only(tmp_path):
    store = WorkStore(tmp_path / "h" / "w.sqlite")
    store.add(item("a"), 0)
    assert stat.S_IMODE(os.stat(tmp_path / "h").st_mode) == 0o700
    for f in (tmp_path / "h").iterdir():
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f.name
