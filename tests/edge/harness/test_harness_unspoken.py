"""A released result the frontend never starts speaking does not stay `delivering`: it is offered again, then
fails; one spoken late under its earlier release is confirmed once."""
from __future__ import annotations

from edge.harness import states as S
from harness_helpers import ScriptedCapability, advance, listen_boundaries, make_harness


def test_an_unspoken_release_is_offered_again_then_fails(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.5)], max_releases=2)
    h.accept("w", "weather?", 0, 0)
    [first] = listen_boundaries(h, clock, 1)
    assert first.release_id == "w:r1" and h.store.get("w").state == S.DELIVERING
    advance(h, clock, 9.5)  # not yet: a reply may take a few chunks to start
    assert h.store.get("w").state == S.DELIVERING
    advance(h, clock, 1)  # 10 s without a word of it: offered again under a new id
    assert h.store.get("w").state == S.COMPLETED
    [second] = listen_boundaries(h, clock, 1)
    assert second.release_id == "w:r2" and [r.id for r in em.results()] == ["w:r1", "w:r2"]
    advance(h, clock, 10.5)  # never spoken again, and tried max_releases times: it fails, and is never spoken
    item = h.store.get("w")
    assert item.state == S.FAILED and item.reason == "never spoken" and not item.notice
    assert listen_boundaries(h, clock, 3) == []


def test_an_unspoken_release_past_its_expiry_fails_as_expired(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.5, ttl_s=12)], max_releases=3)
    h.accept("w", "weather?", 0, 0)
    assert [c.release_id for c in listen_boundaries(h, clock, 1)] == ["w:r1"]
    advance(h, clock, 10.5)
    assert h.store.get("w").state == S.FAILED and h.store.get("w").reason == "expired"


def test_an_earlier_release_spoken_after_all_is_confirmed_once(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.5)], max_releases=2)
    h.accept("w", "weather?", 0, 0)
    listen_boundaries(h, clock, 1)
    advance(h, clock, 10.5)
    [again] = listen_boundaries(h, clock, 1)
    assert again.release_id == "w:r2"
    h.on_speak("w:r1")  # the frontend spoke the first copy late; it ignores the second (same work)
    assert "w:r2" not in h.inflight and h.store.get("w").state == S.DELIVERING
    advance(h, clock, 12)  # speaking: nothing is offered again meanwhile
    assert h.store.get("w").state == S.DELIVERING and listen_boundaries(h, clock, 2) == []
    h.on_delivered("w", "w:r1")
    assert h.store.get("w").state == S.DELIVERED and h.duplicates == 0
    h.on_delivered("w", "w:r2")
    assert h.duplicates == 1


def test_a_reply_started_but_never_confirmed_ends(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.5)])
    h.accept("w", "weather?", 0, 0)
    [rel] = listen_boundaries(h, clock, 1)
    h.on_speak(rel.release_id)
    advance(h, clock, 59)
    assert h.store.get("w").state == S.DELIVERING  # a reply may still be playing
    advance(h, clock, 2)
    item = h.store.get("w")
    assert item.state == S.FAILED and item.reason == "playback was never confirmed" and not item.notice
