"""The plain cascade `bench voice` compares itself with: whisper, the LLM and Piper one after the other."""
from __future__ import annotations

import pytest

from edge.backends.locate import ModelMissing


def test_the_cascade_answers_each_question_and_times_every_stage():
    from edge.bench import spoken
    from edge.bench.cascade import ENDPOINT_SILENCE_S, run_cascade

    try:
        audio, marks = spoken.timeline([(0.4, "How many days are in a week?")], 6.0)
        done = run_cascade(audio, [(mk["text"], mk["start_s"], mk["end_s"]) for mk in marks], 1, 16)
    except ModelMissing as exc:
        pytest.skip(str(exc))
    (turn,) = done
    assert "days" in turn.heard.lower() and turn.reply
    assert min(turn.asr_ms, turn.llm_ms, turn.tts_ms) > 0
    assert turn.latency_ms == pytest.approx(ENDPOINT_SILENCE_S * 1e3 + turn.asr_ms + turn.llm_ms + turn.tts_ms)
