"""The answer the user waits for leaves the harness as soon as it is ready, not at the gate's next boundary."""
from __future__ import annotations

import numpy as np

from edge.harness import states as S
from edge.harness.gate import GateSettings
from harness_helpers import S as SEC, ScriptedCapability, advance, make_harness

SPEECH = (0.3 * np.sin(np.arange(16000) * 2 * np.pi * 220 / 16000)).astype(np.float32)


def test_a_result_asked_for_this_turn_is_released_while_the_holding_phrase_plays(tmp_path):
    # The user asks (voice up to 1 s), the delegate opens at 1.5 s, the holding phrase plays from 1.6 s.
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(text="It's noon in Tokyo.", duration_s=0.1)],
                                gate=GateSettings())
    h.on_audio(0, SPEECH)
    clock.advance_to(int(1.5 * SEC))
    h.accept("w", "What time is it in Tokyo?", int(1.5 * SEC), 1)
    h.on_playback(True, int(1.6 * SEC))
    advance(h, clock, 0.3)  # no boundary comes, playback runs: the gate would hold it for both reasons
    rel = em.results()
    assert [r.id for r in rel] == ["w:r1"] and rel[0].text == "It's noon in Tokyo."
    assert h.store.get("w").state == S.DELIVERING
    assert h.boundary(idle=True) is None  # released once


def test_a_result_asked_before_the_user_spoke_again_still_waits_for_the_gate(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=2.0)], gate=GateSettings())
    h.accept("w", "weather in Paris?", 0, 0)
    h.settle()  # running from 0 s
    clock.advance_to(int(1.0 * SEC))
    h.on_audio(int(1.0 * SEC), SPEECH)  # the user talks on while it runs, until 2 s
    advance(h, clock, 1.2)
    assert h.store.get("w").state == S.COMPLETED and em.results() == []
    assert h.boundary(idle=True) is None  # the gate's silence gap after the user's voice still holds it
    advance(h, clock, 1.0)
    assert h.boundary(idle=True).release_id == "w:r1"


def test_awaited_release_can_be_turned_off(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.1)],
                                gate=GateSettings(release_awaited=0))
    h.accept("w", "weather in Paris?", 0, 0)
    h.on_playback(True, 0)
    advance(h, clock, 1.0)
    assert em.results() == [] and h.store.get("w").state == S.COMPLETED
