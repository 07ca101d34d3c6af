"""The turn's transcript at the endpoint: read again only when the user said more since the last pass."""
from __future__ import annotations

import numpy as np

from edge.bench import spoken
from edge.frontend.base import Chunk

NS = 1_000_000_000
RATE = 16000


def words(text: str, end_s: float, total_s: float) -> np.ndarray:
    """`text` spoken so that its last sound ends at `end_s` on a timeline of `total_s` seconds."""
    clip = spoken.say(text, "en-us")
    loud = np.flatnonzero(np.abs(clip) > 0.01)
    clip = clip[:loud[-1] + 1]
    audio = np.zeros(int(total_s * RATE), np.float32)
    end = int(end_s * RATE)
    audio[end - len(clip):end] = 0.8 * clip
    return audio


def run(fe, audio: np.ndarray, k0: int) -> list:
    outs = []
    for k in range(len(audio) // RATE):
        piece = audio[k * RATE:(k + 1) * RATE]
        outs.append(fe.step(Chunk(k0 + k, (k0 + k) * NS, (k0 + k + 1) * NS, piece)))
    return outs


def test_a_turn_read_in_full_before_its_endpoint_is_not_read_again(frontend):
    # The words end 180 ms before a boundary: that boundary reads them (for the prefill), the next one ends
    # the turn with that transcript instead of running the recognizer again.
    audio = words("Turn off the kitchen light.", 2.82, 8.0)
    outs = run(frontend, audio, 1000)
    decided = [o for o in outs if o.info.get("user_end_ns") is not None]
    assert len(decided) == 1, [o.user_text for o in outs]
    turn = decided[0]
    assert "kitchen light" in turn.user_text.lower(), turn.user_text
    assert turn.info.get("asr_reused") and "asr_ms" not in turn.info, turn.info
    earlier = outs[outs.index(turn) - 1]
    assert "asr_ms" in earlier.info, "the pass the transcript came from"


def test_words_said_after_a_pass_are_read_with_the_rest(frontend):
    # The same start, then more words after a short pause: the endpoint's transcript must hold them too.
    audio = words("Turn off the kitchen light", 2.82, 8.0) + words("and the hall fan.", 4.4, 8.0)
    outs = run(frontend, audio, 2000)
    decided = [o for o in outs if o.info.get("user_end_ns") is not None]
    assert len(decided) == 1, [o.user_text for o in outs]
    turn = decided[0]
    heard = turn.user_text.lower()
    assert "kitchen" in heard and "fan" in heard, turn.user_text
    assert not turn.info.get("asr_reused") and "asr_ms" in turn.info
