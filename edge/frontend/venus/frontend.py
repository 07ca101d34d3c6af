"""The Venus frontend: an exported bundle behind `step(chunk) -> ChunkOutput` (`--frontend bundle:DIR`).

Per chunk: each queued frame's slices through the vision graph (Omni), the
chunk's audio through the streaming audio encoder (any chunk length: it keeps
its own 1 s blocks, see encoders.py), then the chunk protocol on
llama.cpp (edge/frontend/venus/chunk_loop.py). Spoken words leave with their
hidden states (ChunkOutput.speech) for the Venus voice; delegate spans go to
the harness; harness results are prefilled at the next idle listen boundary.
The model may yield to a user talking over it by itself; when the barge-in
judge decides the user took the floor and the model went on, `yield_turn`
ends its turn in the chunk loop. The chunk loop drives the model through a
context log (context_log.py), which a restarted frontend replays to rebuild
the KV cache.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from edge.frontend.base import Chunk, ChunkOutput, DelegateSpan, Frontend, OverlapJudge, ResultToSay, SpeechStates
from edge.bundle.reader import Bundle, bundle_dir, open_bundle
from edge.frontend.venus.chunk_loop import ChunkLoop
from edge.frontend.venus.context_log import ContextLog
from edge.frontend.venus.encoders import AudioEncoder, VisionEncoder
from edge.backends.llama import LlamaModel
from edge.backends.onnx import open_graph
from edge.bundle.settings import VenusSettings

log = logging.getLogger(__name__)


def graph(bundle: Bundle, name: str, settings: VenusSettings):
    return open_graph(name, bundle.graphs[name], bundle.engines.get(name), settings.device, settings.threads,
                      bundle.root / ".cache" / "trt")


class VenusFrontend(Frontend):
    name = "venus"

    def __init__(self, root: Path, settings: VenusSettings) -> None:
        self.s = settings
        self.bundle = open_bundle(root, precision=settings.precision, encoder_precision=settings.encoder_precision,
                                  device=settings.device)
        b = self.bundle
        self.llm = LlamaModel(b.llm, settings.n_ctx, settings.threads, settings.gpu_layers(), settings.flash_attn,
                              kv_type=settings.kv_type)
        if self.llm.n_ctx < settings.n_ctx:  # the model was trained on less: keep the marks in proportion
            scale = self.llm.n_ctx / settings.n_ctx
            settings.kv_high, settings.kv_low = int(settings.kv_high * scale), int(settings.kv_low * scale)
            log.info("venus: context %d (the model's trained length); KV marks %d/%d", self.llm.n_ctx,
                     settings.kv_high, settings.kv_low)
        audio = graph(b, "audio", settings)
        facts = b.runtime.audio
        assert facts is not None  # open_bundle refuses a bundle without audio settings
        self.audio = AudioEncoder(audio, getattr(audio, "input_shapes", None) or {}, facts)
        self.vision: VisionEncoder | None = None
        if b.variant == "omni":
            vf = b.runtime.vision
            assert vf is not None  # open_bundle refuses an omni bundle without slicing settings
            self.vision = VisionEncoder(graph(b, "vision", settings), vf.scale_resolution, vf.patch_size,
                                        settings.max_slices or vf.max_slices, vf.max_side)
        self.slice_rows = 0  # embeddings per vision slice (the resampler's queries), measured at warm-up
        self._warm_up()
        self.context = ContextLog(self.llm)
        self.loop = ChunkLoop(self.context, settings)
        log.info("venus: %s bundle, LLM %s, encoders %s, context %d, KV %s", b.variant, b.llm_precision,
                 b.graph_precision, self.llm.n_ctx, self.llm.kv_type)
        self._llm_told = False

    def _warm_up(self) -> None:
        """Pay the encoders' first-run costs (allocation, kernel choice) before the first chunk."""
        self.audio.encode(np.zeros(self.audio.block_samples, np.float32))
        self.audio.reset()
        if self.vision is not None:
            self.slice_rows = len(self.vision.encode(np.full((64, 64, 3), 128, np.uint8)))  # a small frame: one slice

    def step(self, chunk: Chunk) -> ChunkOutput:
        t0 = time.perf_counter()
        media = []
        if self.vision is not None:
            for fr in chunk.frames:  # every frame queued with the chunk, in order, as the reference flushes them
                emb = self.vision.encode(fr.image)
                media.append(("image", np.split(emb, len(emb) // self.slice_rows)))
        t1 = time.perf_counter()
        heard = self.audio.encode(chunk.audio)  # a chunk under a pooled step may give none
        if len(heard):
            media.append(("audio", heard))
        t2 = time.perf_counter()
        res = self.loop.run(chunk.index, chunk.t_end_ns, media)  # it decodes having heard the whole chunk
        t3 = time.perf_counter()
        # The model yielding to a barge-in: it ends its turn without a word while the user talks over it.
        interrupt = bool(chunk.user_speech_onset_ns is not None and res.turn_end and not res.spoken_ids)
        if interrupt:
            self.loop.cut_turn()  # the harness offers its reply again
        info = {"vision_ms": round((t1 - t0) * 1e3, 2), "audio_ms": round((t2 - t1) * 1e3, 2),
                "llm_ms": round((t3 - t2) * 1e3, 2), "prefill": res.prefill_tokens, "prefill_at": res.prefill_at,
                "decode": res.decode_tokens,
                "prefill_s": res.prefill_s, "decode_s": res.decode_s, "prefill_cpu_s": res.prefill_cpu_s,
                "decode_cpu_s": res.decode_cpu_s, **self.loop.state()}
        if not self._llm_told:  # the journal records what the LLM really runs with, once
            info["llm"] = {"n_ctx": self.llm.n_ctx, "kv_type": self.llm.kv_type, "precision": self.bundle.llm_precision}
            self._llm_told = True
        if res.refused:
            info["refused"] = res.refused
        if res.voided:
            info["voided"] = res.voided
        if res.injected:
            info["injected"] = res.injected
        speech = SpeechStates(res.spoken_ids, res.hidden) if res.hidden is not None else None
        if speech is None and res.control == "speak":  # a speaking chunk without words: the voice still runs
            speech = SpeechStates([], np.zeros((0, self.llm.n_embd), np.float32))
        return ChunkOutput(res.control, res.text,
                           [DelegateSpan(sp.instruction, sp.opened_ns, sp.closed_by) for sp in res.spans],
                           res.turn_end, interrupt, backend_id=res.backend_id if res.text else "",
                           tokens=res.tokens, info=info, speech=speech)

    def deliver(self, result: ResultToSay) -> None:
        self.loop.deliver(result.id, result.text, result.work_id)

    def withdraw(self, result_id: str) -> bool:
        return self.loop.withdraw(result_id)

    def type_text(self, text: str) -> bool:
        return self.loop.type_text(text)

    def hear_overlaps(self, judge: OverlapJudge) -> bool:
        return False  # no transcript of the user: the judge decides from capture's activity and the audio

    def yield_turn(self) -> None:
        self.loop.yield_turn()

    def resume(self, folder: Path, state: dict[str, Any]) -> dict[str, Any]:
        """Keep the context in `folder`; after a restart, prefill it again and take up the turn where it was.

        The audio encoder's streaming cache starts afresh (as after its own periodic reset)."""
        t0 = time.perf_counter()
        replayed = self.context.keep(folder, state.get("context") or {})
        if not replayed:
            return {}
        self.loop.import_state(state["loop"])
        return {"n_past": self.llm.n_past, "prefilled": replayed, "in_turn": self.loop.in_turn,
                "prefill_ms": round((time.perf_counter() - t0) * 1e3, 1)}

    def checkpoint(self) -> dict[str, Any]:
        return {"context": self.context.checkpoint(), "loop": self.loop.export_state()}

    def close(self) -> None:
        self.llm.close()


def build(config: dict) -> VenusFrontend:
    root = bundle_dir(config, "frontend_arg")
    frontend = VenusFrontend(root, VenusSettings.load(root, config))
    if config.get("prompt"):  # --prompt: typed into the first unit
        frontend.type_text(str(config["prompt"]))
    return frontend
