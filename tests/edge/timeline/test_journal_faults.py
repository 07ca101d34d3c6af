"""The journal under a full disk and its privacy: the session goes on, the file stays readable and private."""
from __future__ import annotations

import logging
import os
import stat

from edge import messages as m
from edge.timeline.journal import Journal, JournalWriter
from edge.timeline.redact import REDACTED
from edge.wire import encode
from filling_disk import FillingDisk


def frames(text: str) -> list[bytes]:
    return encode(m.SpeakText(id=text, utterance=1, index=0, text=text), seq=1, epoch=0, t_ns=0, src="frontend")


def test_a_full_disk_stops_the_journal_once_and_writing_resumes_when_space_returns(tmp_path, caplog):
    path = tmp_path / "s.journal"
    w = JournalWriter(path, {"kind": "venus-edge-session", "config": {}}, buffer_bytes=1)
    disk = FillingDisk(w._f)
    w._f = disk
    w.append(1, frames("before"))
    disk.full = True
    with caplog.at_level(logging.WARNING, logger="edge.timeline.journal"):
        for i in range(50):  # a whole stretch of the session while the disk is full: no exception escapes
            w.append(10 + i, frames(f"lost {i}"))
            w.flush()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "disk is full" in errors[0].getMessage()  # one sentence, not one per record
    assert w.error and w.dropped == 50
    disk.full = False
    w.append(100, frames("after"))
    w.close()
    assert w.error is None
    said = [msg.text for _, msg in Journal(path).messages(m.SpeakText)]
    assert said == ["before", "after"]  # whole records only: the journal reads to its end


def test_a_disk_full_from_the_first_write_still_gives_a_journal_with_its_header(tmp_path):
    path = tmp_path / "s.journal"
    w = JournalWriter(path, {"kind": "venus-edge-session", "config": {"x": 1}}, buffer_bytes=1)
    os.truncate(path, 0)  # as if the header had never reached the disk
    w._good, w._buf = 0, bytearray(w._head)
    disk = FillingDisk(w._f)
    w._f, disk.full = disk, True
    w.append(1, frames("lost"))
    disk.full = False
    w.append(2, frames("kept"))
    w.close()
    j = Journal(path)
    assert j.session["config"] == {"x": 1} and [msg.text for _, msg in j.messages(m.SpeakText)] == ["kept"]


def test_journals_are_private_and_hold_no_secrets(tmp_path):
    path = tmp_path / "sessions" / "s.journal"
    config = {"harness": {"mcp": [{"name": "files", "command": "srv", "env": {"GITHUB_TOKEN": "ghp_abc", "X": "1"}}],
                          "chat": {"url": "http://localhost:1", "api_key": "sk-123", "max_tokens": 256}},
              "hf_token": "hf_xyz", "password_file": "/etc/pw", "speaker": "out.wav"}
    JournalWriter(path, {"kind": "venus-edge-session", "config": config}).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    raw = path.read_bytes()
    for secret in (b"ghp_abc", b"sk-123", b"hf_xyz"):
        assert secret not in raw
    rec = Journal(path).session["config"]
    assert rec["harness"]["mcp"][0]["env"] == {"GITHUB_TOKEN": REDACTED, "X": REDACTED}
    assert rec["harness"]["chat"] == {"url": "http://localhost:1", "api_key": REDACTED, "max_tokens": 256}
    assert rec["hf_token"] == REDACTED and rec["password_file"] == "/etc/pw" and rec["speaker"] == "out.wav"
