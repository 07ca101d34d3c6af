"""The harness core on a virtual clock with scripted capabilities: every state transition and the rules."""
from __future__ import annotations

import numpy as np

from edge.harness import states as S
from edge.harness.capability import Outcome
from edge.harness.core import Harness
from edge.harness.gate import GateSettings
from edge.harness.router import ScriptedRouter
from edge.harness.settings import HarnessSettings
from edge.harness.store import WorkStore
from harness_helpers import S as SEC, ScriptedCapability, advance, listen_boundaries, make_harness


def test_result_lifecycle_queued_running_completed_delivering_delivered(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=2.0)])
    assert h.accept("w", "weather in Paris?", 0, 0) is True
    assert h.accept("w", "weather in Paris?", 0, 0) is False  # a re-sent request is not a second item
    rel = listen_boundaries(h, clock, 5)
    assert [r.release_id for r in rel] == ["w:r1"]
    assert em.results()[0].text == "It is sunny in Paris." and em.results()[0].kind == "result"
    h.on_delivered("w", "w:r1")
    h.on_delivered("w", "w:r1")  # a re-sent Delivered changes nothing
    assert em.states("w") == [S.QUEUED, S.RUNNING, S.COMPLETED, S.DELIVERING, S.DELIVERED]
    assert h.duplicates == 1
    assert [e[1] for e in h.store.events("w")] == em.states("w")  # stored and announced alike


def test_cancel_from_queued_running_completed_and_delivering(tmp_path):
    cap = ScriptedCapability(duration_s=5.0)
    h, clock, em = make_harness(tmp_path, [cap], max_running=1)
    for w in "abcd":
        h.accept(w, f"task {w}", 0, 0)
    h.settle()
    assert h.store.get("a").state == S.RUNNING and h.store.get("b").state == S.QUEUED
    assert h.cancel("b") == S.CANCELLED  # queued -> cancelled
    assert h.cancel("a") == S.CANCELLING  # running -> cancelling -> cancelled once the task stops
    h.settle()
    h.poll()
    assert em.states("a") == [S.QUEUED, S.RUNNING, S.CANCELLING, S.CANCELLED]
    advance(h, clock, 6)  # c runs and completes
    assert h.store.get("c").state == S.COMPLETED
    assert h.cancel("c") == S.CANCELLED  # completed -> cancelled: never spoken
    advance(h, clock, 6)
    assert h.boundary(idle=True).work_id == "d"
    assert h.cancel("d") == S.CANCELLED  # delivering -> cancelled
    assert em.states("d")[-2:] == [S.DELIVERING, S.CANCELLED]
    assert h.cancel("d") is None
    assert [r.work_id for r in em.results()] == ["d"]


def test_invalid_arguments_are_refused_before_running(tmp_path):
    cap = ScriptedCapability(schema={"type": "object", "properties": {"city": {"type": "string"}},
                                     "required": ["city"], "additionalProperties": False})
    h, clock, em = make_harness(tmp_path, [cap], rules=[{"match": "weather", "capability": "lookup",
                                                         "arguments": {"town": "Paris"}}])
    h.accept("w", "weather please", 0, 0)
    h.settle()
    item = h.store.get("w")
    assert item.state == S.FAILED and cap.calls == []  # nothing ran
    assert item.reason.startswith("invalid arguments") and "city" in item.reason
    assert any(e.state == S.FAILED and "invalid arguments" in e.detail for e in em if hasattr(e, "state"))
    rel = listen_boundaries(h, clock, 2)
    assert rel[0].kind == "failure" and "Sorry" in rel[0].text and "<" not in rel[0].text


def test_transient_failures_retry_with_backoff_then_complete(tmp_path):
    cap = ScriptedCapability(duration_s=0.1, transient_failures=2)
    h, clock, em = make_harness(tmp_path, [cap], backoff_s=1.0)
    h.accept("w", "x", 0, 0)
    advance(h, clock, 0.5)
    item = h.store.get("w")
    assert item.state == S.QUEUED and item.not_before_ns > clock.now_ns()  # waiting for its backoff
    advance(h, clock, 5)
    assert em.states("w") == [S.QUEUED, S.RUNNING, S.QUEUED, S.RUNNING, S.QUEUED, S.RUNNING, S.COMPLETED]
    assert h.store.get("w").attempts == 3 and len(cap.calls) == 3
    retries = [e[3] for e in h.store.events("w") if e[2].startswith("retry")]
    starts = [e[3] for e in h.store.events("w") if e[1] == S.RUNNING]
    assert starts[1] - retries[0] >= 1.0 * SEC and starts[2] - retries[1] >= 2.0 * SEC  # backoff doubles


def test_retries_run_out_into_a_spoken_failure(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.1, transient_failures=9)], retries=1,
                                backoff_s=0.2)
    h.accept("w", "x", 0, 0)
    advance(h, clock, 2)
    assert h.store.get("w").state == S.FAILED
    assert "busy" in h.store.get("w").notice


def test_timeout_fails_in_speakable_words(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=50, timeout_s=3)])
    h.accept("w", "x", 0, 0)
    advance(h, clock, 4)
    item = h.store.get("w")
    assert item.state == S.FAILED and item.reason.startswith("timeout")
    assert item.notice == "Sorry, I couldn't finish that: the lookup tool took too long."


def test_concurrency_is_limited(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=2)])
    for i in range(12):
        h.accept(f"w{i}", "x", 0, 0)
    h.settle()
    assert h.counts() == {S.RUNNING: 8, S.QUEUED: 4}
    advance(h, clock, 2.1)
    assert h.counts()[S.RUNNING] == 4


def test_a_stale_result_is_never_spoken(tmp_path):
    # Completes after its own TTL: stale on arrival.
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=3)], ttl_s=2)
    h.accept("late", "x", 0, 0)
    listen_boundaries(h, clock, 6)
    assert h.store.get("late").state == S.FAILED and h.store.get("late").reason == "expired"
    assert h.store.get("late").notice == ""  # expired results are dropped, not announced
    assert em.results() == []


def test_a_result_held_by_speech_until_it_expires_is_dropped(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.5, ttl_s=4)])
    h.accept("w", "x", 0, 0)
    loud = np.full(16000, 0.3, np.float32)
    for k in range(8):  # the user keeps talking
        h.on_audio(k * SEC, loud)
        advance(h, clock, 1)
        assert h.boundary(idle=True) is None
    assert h.store.get("w").state == S.FAILED and h.store.get("w").reason == "expired"
    assert em.results() == []


def test_a_result_arriving_while_the_user_speaks_waits_for_the_gap(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.2)])
    h.accept("w", "x", 0, 0)
    advance(h, clock, 1.0)  # completed at 0.2 s
    h.on_audio(0, np.full(16000, 0.3, np.float32))  # chunk 0: the user talks throughout
    assert h.store.get("w").state == S.COMPLETED
    assert h.boundary(idle=True) is None  # speaking (RMS over the threshold, held 250 ms)
    speech = np.zeros(16000, np.float32)
    speech[:12000] = 0.3  # chunk 1: voiced until 1.75 s
    clock.advance_to(2 * SEC)
    h.on_audio(1 * SEC, speech)
    assert h.boundary(idle=True) is None  # 250 ms of silence < max(250, 800 - 0.05 x 1800) = 710 ms
    clock.advance_to(int(2.4 * SEC))
    assert h.boundary(idle=True) is None  # 650 ms < 690 ms
    clock.advance_to(int(2.5 * SEC))
    c = h.boundary(idle=True)  # 750 ms >= 685 ms
    assert c is not None and c.work_id == "w"
    assert h.gate.required_gap_ms((2.5 * SEC - c.ready_ns) / 1e6) == 685.0


def test_playback_and_busy_boundaries_hold_results(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.2)])
    h.accept("w", "x", 0, 0)
    advance(h, clock, 2)
    assert h.boundary(idle=False) is None  # the frontend is speaking this chunk
    h.on_playback(True, clock.now_ns())
    assert h.boundary(idle=True) is None
    h.on_playback(False, clock.now_ns())
    assert h.boundary(idle=True) is None  # the gap after playback has not passed
    clock.advance(int(0.8 * SEC))
    assert h.boundary(idle=True) is not None


def test_interrupt_cut_reply_is_offered_again_with_a_new_id(tmp_path):
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.2)], max_releases=2)
    h.accept("w", "x", 0, 0)
    first = listen_boundaries(h, clock, 2)[0]
    h.on_speak(first.release_id)
    h.on_interrupt()
    assert h.store.get("w").state == S.COMPLETED
    second = listen_boundaries(h, clock, 2)[0]
    assert (first.release_id, second.release_id) == ("w:r1", "w:r2")
    h.on_delivered("w", "w:r1")  # a stale confirmation of the cut reply does not count
    assert h.store.get("w").state == S.DELIVERING
    h.on_speak("w:r2")
    h.on_interrupt()
    assert h.store.get("w").state == S.FAILED and h.store.get("w").reason == "interrupted"


def test_a_reply_started_in_the_epoch_an_interrupt_opens_is_not_cut_by_it(tmp_path):
    # In real time the answer that replaces the holding phrase can reach the harness before the interrupt
    # that stopped the phrase: it must not be offered again (the user would hear it twice).
    h, clock, em = make_harness(tmp_path, [ScriptedCapability(duration_s=0.2)], max_releases=2)
    h.accept("w", "x", 0, 0)
    first = listen_boundaries(h, clock, 2)[0]
    h.on_speak(first.release_id, epoch=1)
    h.on_interrupt(epoch=1)
    assert h.store.get("w").state == S.DELIVERING and listen_boundaries(h, clock, 2) == []
    h.on_interrupt(epoch=2)  # a later interrupt cuts it as before
    assert h.store.get("w").state == S.COMPLETED


def test_progress_notices_rank_below_results(tmp_path):
    slow = ScriptedCapability("slow", duration_s=20)
    fast = ScriptedCapability("fast", duration_s=7.5, text="Done quickly.")
    h, clock, em = make_harness(tmp_path, [slow, fast], rules=[{"match": "fast", "capability": "fast",
                                                                "arguments": {"request": "x"}}],
                                progress_after_s=6)
    h.accept("s", "slow one", 0, 0)
    h.accept("f", "fast one", 0, 0)
    advance(h, clock, 7)  # both have progress notices pending
    assert set(h.progress) == {"s", "f"}
    advance(h, clock, 1)  # fast completed: its progress notice is dropped, its result goes first
    rel = h.boundary(idle=True)
    assert rel.kind == "result" and rel.work_id == "f"
    h.on_delivered("f", rel.release_id)
    advance(h, clock, 1)
    rel = h.boundary(idle=True)
    assert rel.kind == "progress" and rel.work_id == "s" and "still checking" in rel.text.lower()


def test_evidence_is_frozen_at_the_delegates_opening(tmp_path):
    seen = {}

    class Probe(ScriptedCapability):
        def run(self, arguments, ctx):
            ev = ctx.evidence()
            seen["seconds"], seen["max"] = ev.seconds, float(ev.audio.max())
            return Outcome("ok")

    h, clock, em = make_harness(tmp_path, [Probe(duration_s=0)], context_s=2)
    for k in range(4):
        h.on_audio(k * SEC, np.full(16000, 0.1 * (k + 1), np.float32))
    h.accept("w", "what did I say?", int(2.5 * SEC), 2)
    h.on_audio(4 * SEC, np.ones(16000, np.float32))  # after the cutoff: must not be seen
    h.settle()
    assert seen["seconds"] == 2.0 and abs(seen["max"] - 0.3) < 1e-3  # [0.5 s, 2.5 s): chunks 0.2 and 0.3 only
    h.settle()
    h.poll()
    assert not list((tmp_path / "evidence").glob("*.npz")) or h.store.get("w").state != S.DELIVERED


def test_restart_resumes_running_work_and_delivers_it_once(tmp_path):
    cap = ScriptedCapability(duration_s=3)
    h, clock, em = make_harness(tmp_path, [cap])
    h.accept("w", "x", 0, 0)
    advance(h, clock, 1)
    assert h.store.get("w").state == S.RUNNING
    h.close()  # the old process is gone; its late answer must not count
    h2 = Harness(WorkStore(tmp_path / "work.sqlite"), h.registry, ScriptedRouter([], "lookup"), clock, em,
                 HarnessSettings(gate=GateSettings(release_awaited=0)), tmp_path / "evidence")
    assert h2.resume()["requeued"] == 1
    rel = listen_boundaries(h2, clock, 5)
    assert [r.release_id for r in rel] == ["w:r1"]
    # Another restart while delivering: the same release id is offered again (the frontend ignores a copy).
    h2.close()
    h3 = Harness(WorkStore(tmp_path / "work.sqlite"), h.registry, ScriptedRouter([], "lookup"), clock, em,
                 HarnessSettings(gate=GateSettings(release_awaited=0)), tmp_path / "evidence")
    assert h3.resume()["rereleased"] == 1
    assert [r.id for r in em.results()] == ["w:r1", "w:r1"]
    h3.on_delivered("w", "w:r1")
    h3.on_delivered("w", "w:r1")
    assert em.states("w") == [S.QUEUED, S.RUNNING, S.QUEUED, S.RUNNING, S.COMPLETED, S.DELIVERING, S.DELIVERED]
