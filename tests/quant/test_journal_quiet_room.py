"""A file session's quiet room (chunks said in their header alone) replays as the frontend heard it: zeros."""
from __future__ import annotations

import numpy as np

from edge import messages as m
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal
from quant.journal_stream import stream_from_journal

SCRIPT = "1 speak Hello there.\n3 delegate What is the weather in Paris?\n"


def test_quiet_chunks_after_the_file_replay_as_zeros(tmp_path, speech_wav):
    script = tmp_path / "script.txt"
    script.write_text(SCRIPT)
    journal = tmp_path / "s.journal"
    # The delegation fails (no capability) and its notice is said after the file: the session waits in quiet.
    cfg = SessionConfig(mic=str(speech_wav), speaker="null", journal=str(journal), realtime=False,
                        frontend=f"scripted:{script}", voice="null")
    assert run_session(cfg, inprocess=True).ok
    quiet = {msg.index: msg.n_samples for _, msg in Journal(journal).messages(m.AudioChunk) if msg.silent}
    assert quiet, "the session ended with its file: no quiet chunk to replay"
    stream = stream_from_journal(journal)
    replayed = {c.index: c.audio for c in stream.chunks}
    for index, n in quiet.items():
        if index in replayed:
            assert replayed[index] is not None and replayed[index].shape == (n,) and not replayed[index].any()
    assert any(i in replayed for i in quiet)
