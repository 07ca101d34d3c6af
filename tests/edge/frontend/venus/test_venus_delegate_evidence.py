"""A delegate's frozen evidence holds what the model had heard when it wrote the span: through the end of that
chunk (often the end of the request itself). A tiny Audio bundle as the exporter writes it, and the real harness."""
from __future__ import annotations

import numpy as np

from edge.bundle.settings import VenusSettings
from edge.clock import VirtualClock
from edge.frontend.base import Chunk
from edge.frontend.venus.frontend import VenusFrontend
from edge.harness.capability import Outcome, Registry
from edge.harness.core import Harness
from edge.harness.evidence import Evidence
from edge.harness.router import ScriptedRouter
from edge.harness.store import WorkStore

from venus_support import BASE, speechy

NS = 1_000_000_000


class Heard:
    name, description, instructions = "heard", "Answers from the frozen audio.", ""
    schema = {"type": "object"}
    timeout_s = 30.0

    def __init__(self) -> None:
        self.evidence: list[Evidence] = []

    def run(self, arguments, ctx) -> Outcome:
        self.evidence.append(ctx.evidence())
        return Outcome("Done.")


def test_the_evidence_runs_to_the_end_of_the_chunk_the_span_was_written_in(tmp_path, exported_audio_bundle):
    forced = {"*": ["<|listen|>"], 2: ["<|speak|>", "Let me check", "<delegate>", "the parcel number", "</delegate>",
                                       "<|turn_eos|>"]}
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({**BASE, "forced": forced}))
    cap = Heard()
    registry = Registry()
    registry.add(cap)
    h = Harness(WorkStore(tmp_path / "work.sqlite"), registry, ScriptedRouter([], default="heard"), VirtualClock(),
                lambda msg: None, evidence_dir=tmp_path / "evidence")
    # The request ends in the last 0.3 s of chunk 2: a tone the evidence must keep.
    tone = (0.5 * np.sin(2 * np.pi * 440 * np.arange(4800) / 16000)).astype(np.float32)
    try:
        spans = []
        for k in range(3):
            audio = speechy(1.0, seed=k)
            if k == 2:
                audio[-4800:] = tone
            chunk = Chunk(k, k * NS, (k + 1) * NS, audio)
            h.on_audio(chunk.t_start_ns, chunk.audio)  # the harness hears the chunk as the frontend does
            out = f.step(chunk)
            spans += [(k, d) for d in out.delegates]
        [(index, span)] = spans
        assert index == 2 and span.instruction == "the parcel number"
        assert span.opened_ns == 3 * NS  # the model had heard chunk 2 to its end when it wrote the span
        h.accept("w", span.instruction, span.opened_ns, index)
        h.settle()
        [ev] = cap.evidence
        assert ev.cutoff_ns == 3 * NS and len(ev.audio) == 3 * 16000
        np.testing.assert_allclose(ev.audio[-4800:], tone, atol=1e-4)  # the end of the request is in it
    finally:
        h.close()
        h.store.close()
        f.close()
