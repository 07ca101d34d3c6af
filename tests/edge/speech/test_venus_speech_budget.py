"""The voice makes the reference's speech budget per speaking chunk (docs/conformance.md): 25 codes (1 s), fewer
only where a turn starts or ends; a speaking chunk without words too, a lone idle <|chunk_eos|> included."""
from __future__ import annotations

from speech_budget import codes_per_chunk


def test_every_speaking_chunk_carries_the_references_code_count(omni_bundle):
    counts, controls = codes_per_chunk(omni_bundle)
    assert controls[3] == "speak" and controls[7] == "speak"  # wordless, and the idle lone chunk end
    assert [counts[k] for k in (2, 3, 4)] == [25, 25, 25]  # inside the turn: the whole budget, word or none
    assert counts[1] <= 25 and counts[5] <= 25  # where the turn starts and ends the end code may come early
    assert 7 in counts and counts[7] <= 25  # the idle lone <|chunk_eos|> starts a turn's worth of speech
    assert set(counts) == {1, 2, 3, 4, 5, 7}
