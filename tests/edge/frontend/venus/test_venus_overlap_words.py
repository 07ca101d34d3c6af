"""Speech over a bundle's reply is judged from its words: a backchannel lets it go on, "wait, stop" ends it.

A Venus bundle has no transcript of the user, so the barge-in judge reads
the overlapping audio itself with the embedded recognizer (whisper tiny.en).
Real spoken audio (espeak-ng) over a session of a bundle exactly as the
exporter writes it.
"""
from __future__ import annotations

import pytest

from edge import messages as m
from edge.bargein import words as barge_in
from edge.bench import spoken
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

from venus_support import BASE

pytest.importorskip("faster_whisper", reason="faster-whisper reads the overlapping speech")

BACKCHANNEL_S, INTERRUPT_S = 3.3, 6.2
# The model speaks from chunk 1 to chunk 6 and would go on; every other chunk asks to listen.
FORCED = {"1": ["<|speak|>", "Here is a long answer", "<|chunk_eos|>"],
          **{str(k): ["and it goes on", "<|chunk_eos|>"] for k in range(2, 7)}, "*": ["<|listen|>"]}


def test_a_backchannel_keeps_the_reply_going_and_an_interruption_ends_it_by_the_next_boundary(
        tmp_path, exported_audio_bundle):
    mic, _ = spoken.timeline([(BACKCHANNEL_S, "Yeah."), (INTERRUPT_S, "Wait, stop.")], 10.0)
    spoken.write(tmp_path / "mic.wav", 0.3 * mic)
    cfg = SessionConfig(mic=str(tmp_path / "mic.wav"), speaker=str(tmp_path / "out.wav"), speaker_rate=16000,
                        journal=str(tmp_path / "s.journal"), frontend=f"bundle:{exported_audio_bundle}",
                        voice="espeak", realtime=False, extra={"venus": {**BASE, "forced": FORCED}})
    report = run_session(cfg)
    assert report.ok, report.reason
    decisions = [d for _, d in Journal(cfg.journal).messages(m.ChunkDecision)]
    judged = [(d.index, d.info["barge_in"]) for d in decisions if "barge_in" in d.info]
    # The backchannel: read as one, and the reply went on through it.
    back = [(k, bi) for k, bi in judged if abs(bi["onset_ns"] / 1e9 - BACKCHANNEL_S) < 0.3]
    assert back and back[-1][1]["decision"] == "backchannel", judged
    assert "yeah" in barge_in.words(back[-1][1]["text"])
    assert [d.index for d in decisions if d.text and int(BACKCHANNEL_S) < d.index < int(INTERRUPT_S)] == [4, 5]
    # The interruption: decided at the boundary that ends the chunk it began in, from its words (with level
    # and length alone a second of speech is "noise" there, and the reply would have gone on).
    [stop] = [d for d in decisions if d.interrupt]
    assert stop.index == int(INTERRUPT_S), judged
    bi = stop.info["barge_in"]
    assert bi["decision"] == "interrupt" and bi["reason"] == "speech aimed at the assistant"
    assert {"wait", "stop"} & set(barge_in.words(bi["text"])), bi
    assert bi["after_onset_ms"] < 1000
    after = [d for d in decisions if d.index > stop.index]
    assert after and all(d.control == "listen" and "refused" not in d.info for d in after), \
        [(d.index, d.control, d.info.get("refused")) for d in after]
