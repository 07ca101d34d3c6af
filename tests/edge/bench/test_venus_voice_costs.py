"""bench voice --bundle's per-chunk figures for the Venus voice: a real session's words spoken again."""
from __future__ import annotations

import math
import re

import soundfile as sf

from edge import messages as m
from edge.bench.voice_costs import chunk_costs, session_words, summary
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

from venus_support import BASE, speechy

FORCED = {"*": ["<|listen|>"], "1": ["<|speak|>", "one two three four", "<|chunk_eos|>"],
          "2": ["<|speak|>", "five six seven eight", "<|turn_eos|>"]}
# Room for each chunk's forced words and its end token: a turn cut by the cap would stay open, and the file's
# end would then wait out --answer-wait while the tiny model spoke on (edge/nodes/capture_tail.py).
MAX_SPEAK_TOKENS = 24


def test_each_chunk_of_a_sessions_words_gets_tts_and_token2wav_figures(tmp_path, audio_bundle):
    wav = tmp_path / "in.wav"
    sf.write(wav, speechy(4.0), 16000, subtype="PCM_16")
    cfg = SessionConfig(mic=str(wav), speaker=str(tmp_path / "out.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"bundle:{audio_bundle}", voice=f"bundle:{audio_bundle}", realtime=False,
                        extra={"venus": {**BASE, "max_speak_tokens": MAX_SPEAK_TOKENS, "forced": FORCED}})
    report = run_session(cfg)
    assert report.ok, report.reason
    journal = Journal(tmp_path / "s.journal")
    said = [msg for _, msg in journal.messages(m.SpeakText)]
    assert said, "the forced turn spoke no words"
    assert [d.index for _, d in journal.messages(m.ChunkDecision) if d.turn_end] == [2]  # the forced turn ended
    words = session_words(tmp_path / "s.journal", limit=40)
    assert all(hidden is not None for _, hidden, _ in words)  # the journal kept each chunk's hidden states
    assert words[-1][2]  # the last words end their turn
    costs = chunk_costs(audio_bundle, tmp_path / "s.journal", threads=1)
    assert len(costs) == len(said)  # one figure per chunk of words, in the session's order
    assert all(c.codes > 0 and c.tts_s > 0 for c in costs)
    assert sum(c.samples for c in costs) > 0  # the turn's end lets out what token2wav still held
    overall, line = summary(costs)
    assert all(math.isfinite(v) and v > 0 for v in overall.values())
    assert re.search(r"TTS rtf p50 [\d.]+ p90 [\d.]+ over \d+ chunks with codes; token2wav rtf p50 [\d.]+", line)
