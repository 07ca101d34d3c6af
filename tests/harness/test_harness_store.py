"""The work-item store: every allowed transition, refused ones, idempotent intake, durability."""
from __future__ import annotations

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


def test_a_corrupt_store_is_refused_with_a_sentence(tmp_path):
    bad = tmp_path / "w.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open the work-item store"):
        WorkStore(bad)
