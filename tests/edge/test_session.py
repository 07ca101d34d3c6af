"""A session through the real process graph: speech where the script puts it, replay, in-process equality."""
from __future__ import annotations

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal, content
from edge.replay import replay


def energy_windows(path, win_s=0.25):
    audio, rate = sf.read(str(path), dtype="float32")
    n = int(rate * win_s)
    return audio, rate, np.array([np.sqrt(np.mean(audio[i:i + n] ** 2)) for i in range(0, len(audio) - n, n)])




def test_process_graph_session_puts_speech_where_the_script_says(tmp_path, speech_wav, script):
    # The script's delegate fails and its notice would be said after the file: answer_wait_s=0 ends the session
    # with the file, so its six chunks hold all of it (the wait is tested in test_file_end_wait.py).
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{script}", voice="espeak", realtime=True, answer_wait_s=0.0)
    report = run_session(cfg)
    assert report.ok, report.reason
    audio, rate, rms = energy_windows(tmp_path / "out.wav")
    assert len(audio) / rate >= 6.0  # time-aligned: at least as long as the input
    # Chunk 1 ends at 2.0 s: silence before, speech right after.
    assert rms[: int(1.9 / 0.25)].max() < 1e-3
    assert rms[int(2.1 / 0.25): int(2.6 / 0.25)].max() > 0.01
    journal = Journal(tmp_path / "s.journal")
    types = [msg.TYPE for _, msg in journal.messages()]
    assert types.count("chunk_decision") == 6
    delegated = [msg for _, msg in journal.messages(m.DelegateRequest)]
    assert [d.instruction for d in delegated] == ["What is the weather in Paris?"]
    acks = [msg for _, msg in journal.messages(m.PlaybackAck)]
    assert acks and all(a.samples > 0 for a in acks)
    # Replay reproduces the session from its journal alone.
    result = replay(tmp_path / "s.journal", verify=True, speaker=str(tmp_path / "replay.wav"))
    assert result.ok, result.first_difference
    assert result.compared >= 6 + 2 + 1
    a, _ = sf.read(str(tmp_path / "out.wav"), dtype="float32")
    b, _ = sf.read(str(tmp_path / "replay.wav"), dtype="float32")
    # Same speech, placed within a few ms of real-time jitter.
    assert abs(float(np.sum(a ** 2)) - float(np.sum(b ** 2))) / float(np.sum(a ** 2)) < 0.01


def test_inprocess_gives_the_same_journal_contents(tmp_path, speech_wav, script):
    common = dict(mic=str(speech_wav), frontend=f"scripted:{script}", voice="espeak", realtime=False,
                  answer_wait_s=0.0)  # when a harness result is released depends on the machine: not compared
    a = SessionConfig(speaker=str(tmp_path / "a.wav"), journal=str(tmp_path / "a.journal"), **common)
    b = SessionConfig(speaker=str(tmp_path / "b.wav"), journal=str(tmp_path / "b.journal"), **common)
    assert run_session(a, inprocess=False).ok
    assert run_session(b, inprocess=True).ok
    ca, cb = content(Journal(a.journal)), content(Journal(b.journal))
    assert ca and ca == cb
    wa, _ = sf.read(a.speaker, dtype="int16")
    wb, _ = sf.read(b.speaker, dtype="int16")
    assert np.array_equal(wa, wb)


LONG_THEN_INTERRUPT = ("0 speak This is a long answer that keeps going and going for quite a while, "
                       "certainly longer than three seconds of speech.\n2 interrupt\n")


def interrupted_session(tmp_path, speech_wav, realtime: bool) -> None:
    """A long reply the script interrupts at 3 s; the reply lands in o.wav and the journal in j."""
    script = tmp_path / "s.txt"
    script.write_text(LONG_THEN_INTERRUPT)
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "o.wav"), journal=str(tmp_path / "j"),
                        frontend=f"scripted:{script}", voice="espeak", realtime=realtime)
    assert run_session(cfg).ok


def test_interrupt_cuts_speech_at_the_chunk_boundary(tmp_path, speech_wav):
    interrupted_session(tmp_path, speech_wav, realtime=False)
    _, rate, rms = energy_windows(tmp_path / "o.wav", 0.1)
    assert rms[12:28].max() > 0.01  # speaking from 1 s ...
    assert rms[31:].max() < 1e-4  # ... silent after the interrupt at 3 s


def test_live_interrupt_stops_playback_within_100_ms(tmp_path, speech_wav):
    interrupted_session(tmp_path, speech_wav, realtime=True)
    interrupts = [rec for rec, _ in Journal(tmp_path / "j").messages(m.Interrupt)]
    assert len(interrupts) == 1
    t_interrupt = interrupts[0].env.t_ns / 1e9  # when the supervisor relayed it
    audio, rate = sf.read(str(tmp_path / "o.wav"), dtype="float32")
    voiced = np.flatnonzero(np.abs(audio) > 1e-3)
    assert voiced[0] / rate < t_interrupt  # it was speaking ...
    assert voiced[-1] / rate < t_interrupt + 0.1  # ... and fell silent within 100 ms


def test_session_runs_when_the_runtime_directory_path_is_long(tmp_path, speech_wav, script, monkeypatch):
    # Unix socket paths hold 107 bytes; a deep XDG_RUNTIME_DIR must not stop the graph from binding.
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{script}", voice="espeak", realtime=False, answer_wait_s=0.0)
    report = run_session(cfg)
    assert report.ok, report.reason
    assert len([msg for _, msg in Journal(tmp_path / "s.journal").messages(m.ChunkDecision)]) == 6
