"""The judge reads speech over the reply itself when the frontend has no transcript (a Venus bundle, a script).

Real spoken audio (espeak-ng) over a frontend that speaks every chunk and
hears nothing; capture's duck and onset are given as capture sends them.
The same overlaps are judged with the embedded recognizer and without it.
"""
from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import pytest

from edge import messages as m
from edge.bargein import overlap_asr
from edge.bargein.judge import BargeInJudge
from edge.bargein.overlap_asr import OverlapTranscriber
from edge.frontend.base import Chunk

from duplex_helpers import RATE, Speaking, say

NS = 1_000_000_000
ONSET_S = 1.2


@pytest.fixture(scope="module")
def transcriber():
    pytest.importorskip("faster_whisper", reason="faster-whisper is the embedded recognizer")
    t = OverlapTranscriber.load({"threads": 1}, preload=True)
    assert t is not None
    yield t
    t.close()


def judged(phrase: str, transcriber: OverlapTranscriber | None) -> tuple[list[str], Speaking]:
    """The user says `phrase` from 1.2 s over the reply; the judge's decision at each boundary until it is final."""
    speech = 0.25 * say(phrase)
    mic = 1e-4 * np.random.default_rng(0).standard_normal(5 * RATE).astype(np.float32)
    start = int(ONSET_S * RATE)
    mic[start:start + len(speech)] += speech
    end_ns = int((ONSET_S + len(speech) / RATE + 0.2) * NS)  # capture's offset: the VAD's hangover after the words
    fe = Speaking()
    judge = BargeInJudge(fe, {}, transcriber)
    onset = int(ONSET_S * NS)
    events = [(onset + 32_000_000, m.Duck(0.3, "speech onset", onset)),
              (onset + 64_000_000, m.SpeechActivity("onset", onset, onset + 64_000_000, -24.0, 64.0, True)),
              (end_ns, m.SpeechActivity("offset", onset, end_ns, -24.0, (end_ns - onset) / 1e6, True))]
    decisions = []
    for k in range(5):
        t0, t1 = k * NS, (k + 1) * NS
        for t, msg in [e for e in events if t0 <= e[0] < t1]:  # what capture said during this chunk
            judge.on_message(SimpleNamespace(msg=msg, src="capture", t_ns=t))
        chunk = Chunk(k, t0, t1, mic[k * RATE:(k + 1) * RATE], user_speech_onset_ns=judge.overlap_onset(t0, t1))
        judge.hear(chunk)  # as the frontend node does: the transcript runs while the frontend steps
        out = fe.step(chunk)
        judge.decide(chunk, out)
        if "barge_in" in out.info:
            decisions.append(out.info["barge_in"]["decision"])
            if decisions[-1] != "pending":
                break
    return decisions, fe


def test_a_short_interruption_is_read_and_ends_the_reply_at_the_next_boundary(transcriber):
    decisions, fe = judged("Wait, stop.", transcriber)
    assert decisions == ["interrupt"] and fe.yields == 1
    # Level and length alone: under a second of speech is too little to call an interruption, and never is.
    decisions, fe = judged("Wait, stop.", None)
    assert "interrupt" not in decisions and fe.yields == 0


@pytest.mark.parametrize("phrase", ["Yeah.", "Uh-huh.", "Right."])
def test_a_backchannel_is_read_as_one_and_the_reply_goes_on(transcriber, phrase):
    decisions, fe = judged(phrase, transcriber)
    assert decisions == ["backchannel"] and fe.yields == 0 and fe.speaking


def test_a_question_over_the_reply_takes_the_floor_at_once(transcriber):
    decisions, fe = judged("What time does the museum open tomorrow?", transcriber)
    assert decisions == ["interrupt"]
    decisions, _ = judged("What time does the museum open tomorrow?", None)
    assert decisions[0] == "pending"  # without words it waits for 2.4 s of voiced speech


def test_without_the_recognizer_the_judge_says_why_once_and_keeps_the_level_rule(monkeypatch, caplog):
    real = overlap_asr.importlib.util.find_spec
    monkeypatch.setattr(overlap_asr.importlib.util, "find_spec",
                        lambda name, *a: None if name == "faster_whisper" else real(name, *a))
    with caplog.at_level(logging.WARNING, logger="edge.bargein"):
        assert OverlapTranscriber.load({}) is None
    [record] = caplog.records
    assert "level and length" in record.getMessage() and "pip install faster-whisper" in record.getMessage()
