"""The Wyoming server's harness folder cannot be written (a folder that cannot be made, a full disk): the server
starts and goes on, a transcript is declined in the voice session's words, and is answered again once it can."""
from __future__ import annotations

import logging

from edge.harness.outage import AGAIN, WHY_FULL, WHY_REFUSED
from edge.wyoming import converse
from edge.wyoming.converse import Conversation
from filling_disk import Disk, FillingDatabase

RULES_ONLY = {"retries": 0, "router": {"fast": {"scripted": {"rules": [], "default": None}}}}


def through_outage(c: Conversation, ends) -> tuple:
    """Two transcripts while the folder cannot be written, `ends()` the outage, then a third."""
    first, second = c.answer("What is 3 plus 3?"), c.answer("What is 5 plus 5?")
    ends()
    return first, second, c.answer("What is 4 plus 4?")


def declined_then_answered(answers: tuple, caplog, why: str, cause: str) -> None:
    """Declined with `why` and then "not now", answered after; the log says `cause`, then that it is back."""
    first, second, after = answers
    assert (first, second) == ((False, why), (False, AGAIN))
    assert after[0] and "8" in after[1], after
    said = [r.getMessage() for r in caplog.records if "harness folder" in r.getMessage()]
    assert len(said) == 2 and cause in said[0] and "written again" in said[1], said
    assert not any(r.exc_info for r in caplog.records)


def test_a_folder_that_cannot_be_made_declines_transcripts_then_answers_once_it_can(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(converse, "RETRY_S", 0.0, raising=False)  # built again at the next transcript
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the state folder would be")
    with caplog.at_level(logging.WARNING):
        c = Conversation({**RULES_ONLY, "dir": str(blocked / "wyoming")})  # was: StoreUnwritable, no server
        try:
            answers = through_outage(c, blocked.unlink)
        finally:
            c.close()
    declined_then_answered(answers, caplog, WHY_REFUSED, "cannot be written (not a directory)")


def test_a_disk_that_fills_while_serving_declines_transcripts_then_answers_once_there_is_room(tmp_path, caplog):
    c = Conversation({**RULES_ONLY, "dir": str(tmp_path / "wyoming")})
    try:
        assert c.answer("What is 2 plus 2?") == (True, "2 plus 2 is 4.")
        disk = Disk()
        store = c.built.harness.store
        store.db = FillingDatabase(store.db, disk)  # type: ignore[assignment]
        disk.full = True
        with caplog.at_level(logging.WARNING):
            answers = through_outage(c, lambda: setattr(disk, "full", False))
    finally:
        c.close()
    declined_then_answered(answers, caplog, WHY_FULL, "the disk is full")
