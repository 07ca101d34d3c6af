"""Harness results in the chunk loop, on a tiny Audio bundle as the exporter writes it: every waiting result is
prefilled, one per idle listen boundary in the order the harness released them, and each next turn speaks its
own; a later release of the same work never puts it in the context twice."""
from __future__ import annotations

from edge.bundle.settings import VenusSettings
from edge.frontend.base import ResultToSay, Chunk
from edge.frontend.venus.frontend import VenusFrontend

from venus_support import BASE, speechy

NS = 1_000_000_000
SAY = ["<|speak|>", "Here it is", "<|turn_eos|>"]


def step(f: VenusFrontend, k: int):
    return f.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))


def test_several_waiting_results_are_each_injected_in_release_order(exported_audio_bundle):
    forced = {"*": ["<|listen|>"], 1: SAY, 3: SAY, 5: SAY}
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({**BASE, "forced": forced}))
    try:
        for work in ("a", "b", "c"):
            f.deliver(ResultToSay(f"{work}:r1", f"Result {work}.", work))
        outs = [step(f, k) for k in range(7)]
        assert [o.info.get("injected") for o in outs] == [["a:r1"], None, ["b:r1"], None, ["c:r1"], None, None]
        assert [o.backend_id for o in outs] == ["", "a:r1", "", "b:r1", "", "c:r1", ""]
        assert f.loop.pending == [] and not f.loop.awaiting
    finally:
        f.close()


def test_a_later_release_of_the_same_work_is_never_in_the_context_twice(exported_audio_bundle):
    forced = {"*": ["<|listen|>"], 0: ["<|speak|>", "Hold on", "<|chunk_eos|>"], 1: ["<|turn_eos|>"], 3: SAY}
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({**BASE, "forced": forced}))
    try:
        f.deliver(ResultToSay("d:r1", "First copy.", "d"))
        step(f, 0)  # speaking: the result waits
        f.deliver(ResultToSay("d:r2", "Second copy.", "d"))  # offered again: it replaces the waiting copy
        assert [(w.result_id, w.text) for w in f.loop.pending] == [("d:r2", "Second copy.")]
        step(f, 1)
        out = step(f, 2)
        assert out.info["injected"] == ["d:r2"]
        f.deliver(ResultToSay("d:r3", "Third copy.", "d"))  # already in the context: only its id changes
        assert f.loop.pending == [] and [w.result_id for w in f.loop.awaiting] == ["d:r3"]
        assert step(f, 3).backend_id == "d:r3"
        f.deliver(ResultToSay("d:r4", "Fourth copy.", "d"))  # spoken already: ignored
        assert "injected" not in step(f, 4).info and f.loop.pending == []
    finally:
        f.close()


def test_a_reply_the_user_cut_is_spoken_again_when_offered_again(exported_audio_bundle):
    forced = {"*": ["<|listen|>"], 1: ["<|speak|>", "The answer is", "<|chunk_eos|>"], 3: SAY}
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({**BASE, "forced": forced}))
    try:
        f.deliver(ResultToSay("e:r1", "First copy.", "e"))
        assert step(f, 0).info["injected"] == ["e:r1"]
        assert step(f, 1).backend_id == "e:r1"
        assert f.loop.yield_turn()  # the user took the floor: the harness offers the cut reply again
        f.deliver(ResultToSay("e:r2", "First copy.", "e"))
        assert step(f, 2).info["injected"] == ["e:r2"]
        assert step(f, 3).backend_id == "e:r2"
    finally:
        f.close()
