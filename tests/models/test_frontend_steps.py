"""The embedded default's chunk loop driven directly, chunk by chunk (no graph): turn-taking rules."""
from __future__ import annotations

import numpy as np
import pytest

from edge.frontend.base import Chunk, ResultToSay
from edge.bench import spoken
from edge.frontend.default.frontend import build

NS = 1_000_000_000


@pytest.fixture(scope="module")
def frontend():
    fe = build({"threads": 1, "realtime": False})
    yield fe
    fe.close()


class Feed:
    """Chunks of one timeline, with the chunk index carried on."""

    def __init__(self, fe) -> None:
        self.fe, self.k = fe, 0

    def run(self, audio: np.ndarray):
        outs = []
        for i in range(0, len(audio), 16000):
            piece = audio[i:i + 16000]
            piece = np.pad(piece, (0, 16000 - len(piece)))
            outs.append(self.fe.step(Chunk(self.k, self.k * NS, (self.k + 1) * NS, piece)))
            self.k += 1
        return outs


def test_results_wait_for_an_idle_boundary_and_repeats_are_ignored(frontend):
    feed = Feed(frontend)
    feed.run(np.zeros(16000 * 3, np.float32))  # let any earlier playback estimate run out
    question, _ = spoken.timeline([(0.2, "What is two plus two?")], 2.0)
    frontend.deliver(ResultToSay("r1", "It is sunny in Paris <delegate>x</delegate> today."))
    frontend.deliver(ResultToSay("r1", "It is sunny in Paris today."))
    outs = feed.run(question)
    assert all(not o.backend_id for o in outs), "a result was spoken while the user was talking"
    later = feed.run(np.zeros(16000 * 12, np.float32))
    spoken_results = [o for o in outs + later if o.backend_id == "r1"]
    assert len(spoken_results) == 1
    r = spoken_results[0]
    assert r.control == "speak" and r.turn_end and "<" not in r.text and "sunny in Paris" in r.text
    # It came only after the reply to the question had finished (the reply is not cut short for it).
    reply_ends = [i for i, o in enumerate(outs + later) if o.turn_end and not o.backend_id]
    assert reply_ends and reply_ends[0] < (outs + later).index(r)


def test_a_filler_alone_is_not_answered(frontend):
    feed = Feed(frontend)
    feed.k = 100
    feed.run(np.zeros(16000 * 8, np.float32))
    audio, _ = spoken.timeline([(0.3, "Mm-hm.")], 3.0)
    outs = feed.run(audio)
    assert any(o.user_text for o in outs), "the filler was not heard at all"
    assert not any(o.text for o in outs)


def test_an_answer_back_while_the_holding_phrase_plays_is_spoken_in_its_place(frontend):
    feed = Feed(frontend)
    feed.k = 200
    feed.run(np.zeros(16000 * 8, np.float32))  # any earlier reply and its playback are over
    question, _ = spoken.timeline([(0.2, "What's the weather like in Berlin today?")], 3.0)
    outs = feed.run(question)
    while not any(o.delegates for o in outs) and len(outs) < 8:
        outs += feed.run(np.zeros(16000, np.float32))
    delegating = next(o for o in outs if o.delegates)
    assert delegating.text, "the model's holding phrase after its span"
    frontend.deliver(ResultToSay("w1", "It is sunny in Berlin today."))
    # The next boundary, while the holding phrase still plays: the answer takes its place, playback is cut.
    k = feed.k
    out = frontend.step(Chunk(k, k * NS, (k + 1) * NS, np.zeros(16000, np.float32), playback_active=True))
    feed.k += 1
    assert out.backend_id == "w1" and out.cut_playback and not out.interrupt
    assert out.control == "speak" and out.turn_end and "sunny in Berlin" in out.text
    later = feed.run(np.zeros(16000 * 4, np.float32))
    assert not any(o.text for o in later), "the rest of the holding phrase was still spoken after the answer"
