"""The embedded default tells a story itself, at length, and never says it is an AI (real models, no graph)."""
from __future__ import annotations

import numpy as np
import pytest

from edge import messages as m
from edge.bench import spoken
from edge.bench.chat_set import MIN_WORDS, score
from edge.frontend.base import Chunk
from edge.nodes.harness import asked_anew

NS = 1_000_000_000


_next = [0]  # the chunk index goes on across the tests: one session timeline


def _run(fe, audio: np.ndarray) -> list:
    outs = []
    for k, i in enumerate(range(0, len(audio), 16000), _next[0]):
        piece = np.pad(audio[i:i + 16000], (0, max(0, 16000 - len(audio[i:i + 16000]))))
        outs.append(fe.step(Chunk(k, k * NS, (k + 1) * NS, piece)))
        _next[0] = k + 1
    return outs


@pytest.mark.parametrize("request_text", ["Please tell me a long story about a lighthouse keeper and his cat.",
                                          "Describe your ideal weekend in the mountains."])
def test_a_story_or_a_description_is_told_locally_at_length(frontend, request_text):
    _run(frontend, np.zeros(16000 * 30, np.float32))  # whatever played before has ended
    audio, _ = spoken.timeline([(0.3, request_text)], 6.0)
    outs = _run(frontend, np.concatenate([audio, np.zeros(16000 * 40, np.float32)]))
    asked = [o for o in outs if o.user_text]
    assert asked and any(w in asked[0].user_text.lower() for w in ("story", "describe"))
    said = " ".join(o.text for o in outs if o.text)
    s = score(said, delegated=any(o.delegates for o in outs))
    assert s.local, f"delegated: {said!r}"
    assert s.words >= MIN_WORDS and not s.refused, said
    # The decision that heard it, as the frontend node publishes it, is a new question for the harness.
    o = asked[0]
    decision = m.ChunkDecision(0, o.control, o.text, o.user_text, o.turn_end, o.interrupt, len(o.delegates),
                               0, 0, 0.0, o.info)
    assert asked_anew(decision) == o.info["user_end_ns"]


def test_a_progress_notice_for_an_earlier_question_is_not_said_after_a_new_one(frontend):
    from edge.frontend.base import ResultToSay

    _run(frontend, np.zeros(16000 * 30, np.float32))
    audio, _ = spoken.timeline([(0.3, "What is two plus two?")], 4.0)
    frontend.deliver(ResultToSay("w1:p", "I'm still checking on that.", "w1"))
    frontend.deliver(ResultToSay("w2:r1", "It is sunny in Paris.", "w2"))
    outs = _run(frontend, np.concatenate([audio[:16000]]))  # the notice waits: the user is speaking
    outs += _run(frontend, np.concatenate([audio[16000:], np.zeros(16000 * 12, np.float32)]))
    said = [o.text for o in outs if o.backend_id]
    assert said == ["It is sunny in Paris."]  # the answer is still said, the stale notice is not
    assert all("still checking" not in text for _, text in frontend.history)


def test_a_story_is_kept_in_the_history_by_its_first_sentences(frontend):
    told = [text for role, text in frontend.history if role == "assistant" and "lighthouse" in text.lower()]
    assert told and all(len(text) <= 320 and text.endswith((".", "!", "?")) for text in told), told
