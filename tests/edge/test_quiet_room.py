"""A quiet room costs almost nothing: no model runs on it, the journal barely grows, and a replay stays exact."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

from edge import messages as m
from edge.bench import spoken
from edge.bench.idle import quiet_room
from edge.detect.vad import FRAME, QUIET_HOLD, SileroVad
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal
from edge.replay import replay
from repo_paths import ROOT

RATE = 16000


def counting(vad: SileroVad) -> list[int]:
    calls = [0]
    run = vad.session.run

    def counted(*a, **k):
        calls[0] += 1
        return run(*a, **k)
    vad.session.run = counted  # type: ignore[method-assign]
    return calls


def test_the_vad_runs_no_model_on_a_quiet_room_and_still_hears_speech(tmp_path):
    room = sf.read(quiet_room(tmp_path / "room.wav", 4.0))[0].astype(np.float32)
    clip = 0.5 * spoken.say("Hello, can you hear me now?")
    vad = SileroVad()
    calls = counting(vad)
    quiet = vad.feed(room, 0)
    assert len(quiet) == len(room) // FRAME == 125
    assert calls[0] == QUIET_HOLD  # the first second, then nothing more for the rest of the room
    assert all(f.prob == 0.0 for f in quiet[QUIET_HOLD:])
    heard = vad.feed(np.concatenate([clip, room[:RATE]]))
    assert calls[0] > 0 and max(f.prob for f in heard) > 0.8


def test_speech_after_a_long_quiet_room_is_heard_as_after_a_short_one(tmp_path):
    # Skipping the model must not cool it down: a cold model trusts the next speech frames later, and over
    # the reply (speech thinned by the echo canceller) that delayed barge-in by a second or more.
    room = sf.read(quiet_room(tmp_path / "room.wav", 4.0))[0].astype(np.float32)
    clip = 0.1 * spoken.say("Hello, can you hear me now?")
    heard = []
    for frames in (QUIET_HOLD, 125):  # not long enough to skip anything; three seconds skipped
        vad = SileroVad()
        vad.feed(room[:frames * FRAME], 0)
        heard.append([f.prob for f in vad.feed(clip)])
    np.testing.assert_allclose(heard[1], heard[0], atol=0.01)


def mixed_input(path: Path) -> Path:
    """Ten seconds of a quiet room, a question, then twenty more seconds of the room."""
    room = sf.read(quiet_room(path.with_suffix(".room.wav"), 30.0))[0].astype(np.float32)
    clip = 0.5 * spoken.say("What is the weather in Paris?")
    audio = room.copy()
    audio[10 * RATE:10 * RATE + len(clip)] += clip
    sf.write(str(path), audio, RATE, subtype="PCM_16")
    return path


def test_quiet_chunks_are_summarized_and_the_replay_is_exact(tmp_path):
    script = tmp_path / "script.txt"
    script.write_text("12 speak It is sunny.\n20 speak Anything else?\n")
    cfg = SessionConfig(mic=str(mixed_input(tmp_path / "in.wav")), speaker=str(tmp_path / "out.wav"),
                        journal=str(tmp_path / "s.journal"), frontend=f"scripted:{script}", voice="espeak",
                        realtime=False)
    assert run_session(cfg, inprocess=True).ok
    chunks = [(rec, msg) for rec, msg in Journal(tmp_path / "s.journal").messages(m.AudioChunk)]
    silent = {msg.index for _, msg in chunks if msg.silent}
    loud = {msg.index for _, msg in chunks if not msg.silent}
    assert {10, 11} <= loud and len(silent) >= 25  # the question is heard; the room around it is not sent
    assert all(not rec.env.payload for rec, msg in chunks if msg.silent)
    audio_bytes = sum(len(p) for rec, _ in chunks for p in rec.env.payload)
    assert audio_bytes == 2 * RATE * len(loud)

    result = replay(tmp_path / "s.journal", verify=True, out_journal=tmp_path / "r.journal")
    assert result.ok, result.first_difference
    again = [(msg.index, msg.silent) for _, msg in Journal(tmp_path / "r.journal").messages(m.AudioChunk)]
    assert again == [(msg.index, msg.silent) for _, msg in chunks]


def test_bench_idle_prints_its_line_and_silence_barely_grows_the_journal(tmp_path):
    script = tmp_path / "script.txt"
    script.write_text("# nothing is said\n")
    done = subprocess.run([sys.executable, "-m", "edge.cli", "bench", "idle", "--seconds", "6", "--warmup", "2",
                           "--frontend", f"scripted:{script}"], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    found = re.fullmatch(r"idle cpu (\d+\.\d)% of a core, rss (\d+) MB, journal (\d+\.\d) MB/hour", last)
    assert found, last
    assert float(found.group(3)) < 10.0  # an hour of raw 16 kHz audio would be 115 MB


def test_bench_hour_short_version_completes_and_prints_the_growth_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "edge.cli", "bench", "idle", "--hour", "--minutes", "6"],
                          capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert re.fullmatch(r"hour rss growth after \d+ min [+-]\d+\.\d% \(\d+ -> \d+ MB over \d+ min of session\)",
                        lines[-1]), lines[-1]
    assert "6 delegations, 6 results, 6 barge-ins; restarts 0" in lines[0], lines[0]


def test_live_the_chunk_being_cut_goes_to_the_frontend_in_pieces_around_speech_only(tmp_path):
    """Real time: capture hands the frontend each chunk in pieces before its boundary while someone talks and
    through the chunk after (the end of speech), each piece the very samples its chunk holds there; a quiet
    room hands nothing over (the journal keeps no audio of it)."""
    room = sf.read(quiet_room(tmp_path / "room.wav", 6.0))[0].astype(np.float32)
    clip = 0.5 * spoken.say("What is the weather in Paris?")
    audio = room.copy()
    audio[2 * RATE + 3000:2 * RATE + 3000 + len(clip)] += clip
    sf.write(str(tmp_path / "in.wav"), audio, RATE, subtype="PCM_16")
    script = tmp_path / "script.txt"
    script.write_text("# nothing is said\n")
    cfg = SessionConfig(mic=str(tmp_path / "in.wav"), speaker="null", journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{script}", voice="null", realtime=True, answer_wait_s=0.0)
    assert run_session(cfg, inprocess=True).ok
    journal = Journal(tmp_path / "s.journal")
    chunks = {msg.index: (msg, rec.env.payload) for rec, msg in journal.messages(m.AudioChunk)}
    pieces = [(msg, rec.env.payload) for rec, msg in journal.messages(m.AudioSoFar)]
    loud = sorted(i for i, (msg, _) in chunks.items() if not msg.silent)
    assert loud and loud[0] == 2, loud
    handed = sorted({msg.index for msg, _ in pieces})
    assert handed == [i for i in range(2, loud[-1] + 2) if i in chunks], (handed, loud)
    for msg, payload in pieces:
        chunk, pcm = chunks[msg.index]
        at = (msg.t_from_ns - msg.t_start_ns) // 62_500 * 2
        assert msg.t_start_ns == chunk.t_start_ns and msg.t_end_ns < chunk.t_end_ns
        if not chunk.silent:  # (a chunk the gate made silence is zeros: the frontend then hears it again)
            assert payload[0] == pcm[0][at:at + 2 * msg.n_samples]
