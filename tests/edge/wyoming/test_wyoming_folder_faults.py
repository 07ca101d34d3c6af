"""The Wyoming server's harness folder cannot be written (a folder that cannot be made, a full disk): the server
starts and goes on, a transcript is declined in the voice session's words, and is answered again once it can."""
from __future__ import annotations

import logging

from edge.harness.outage import AGAIN, WHY_FULL, WHY_REFUSED
from edge.wyoming import converse
from edge.wyoming.converse import Conversation
from filling_disk import Disk, FillingDatabase

RULES_ONLY = {"retries": 0, "router": {"fast": {"scripted": {"rules": [], "default": None}}}}


def told(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "harness folder" in r.getMessage()]


def test_a_folder_that_cannot_be_made_declines_transcripts_then_answers_once_it_can(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(converse, "RETRY_S", 0.0, raising=False)  # built again at the next transcript
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the state folder would be")
    with caplog.at_level(logging.WARNING):
        c = Conversation({**RULES_ONLY, "dir": str(blocked / "wyoming")})  # was: StoreUnwritable, no server
        try:
            first, second = c.answer("What is 2 plus 2?"), c.answer("What is 3 plus 3?")
            blocked.unlink()
            after = c.answer("What is 4 plus 4?")
        finally:
            c.close()
    assert (first, second) == ((False, WHY_REFUSED), (False, AGAIN))
    assert after[0] and "8" in after[1], after
    said = told(caplog)
    assert len(said) == 2 and "cannot be written (not a directory)" in said[0] and "written again" in said[1], said
    assert not any(r.exc_info for r in caplog.records)


def test_a_disk_that_fills_while_serving_declines_transcripts_then_answers_once_there_is_room(tmp_path, caplog):
    c = Conversation({**RULES_ONLY, "dir": str(tmp_path / "wyoming")})
    try:
        assert c.answer("What is 2 plus 2?") == (True, "2 plus 2 is 4.")
        disk = Disk()
        store = c.built.harness.store
        store.db = FillingDatabase(store.db, disk)  # type: ignore[assignment]
        disk.full = True
        with caplog.at_level(logging.WARNING):
            first, second = c.answer("What is 3 plus 3?"), c.answer("What is 5 plus 5?")
            disk.full = False
            after = c.answer("What is 4 plus 4?")
    finally:
        c.close()
    assert (first, second) == ((False, WHY_FULL), (False, AGAIN))
    assert after[0] and "8" in after[1], after
    said = told(caplog)
    assert len(said) == 2 and "the disk is full" in said[0] and "written again" in said[1], said
    assert not any(r.exc_info for r in caplog.records)
