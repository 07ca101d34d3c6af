"""The vision node: the embedded default's eyes, off the chunk loop.

Each sampled camera frame goes through the memory gate (kernels/gate.py);
a frame it keeps is described (edge/memory/describe.py: the text OCR reads,
the number of faces MediaPipe finds) and stored in
the archive with its seconds of audio (edge/memory/recorder.py). With an
Omni bundle as the frontend (which sees the frames itself) a kept frame is
stored with the bundle's vision tokens instead of a description, for the
harness's memory capability to retrieve and the bundle's model to read. Every
frame looked at gets a `SceneDescription`: the newest one is what the
frontend puts in its context. In real time a frame that waited longer
than `stale_s` (the node was busy reading) is skipped for a newer one; on
the virtual clock every frame is read, and the frontend waits for it.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from edge import messages as m
from edge.graph.node import Node, NodeIO
from edge.memory.archive import Archive
from edge.memory.describe import SceneDescriber
from edge.memory.recorder import Recorder
from edge.memory.settings import MemorySettings
from edge.settings import VisionSettings
from edge.wire import Envelope

if TYPE_CHECKING:
    from edge.frontend.venus.memory import BundleMemory

log = logging.getLogger(__name__)
READ_BOUND_S = 60.0  # reading one frame on a loaded core can take seconds, with no heartbeat meanwhile


class VisionNode(Node):
    name = "vision"
    settings_type = VisionSettings

    def __init__(self, io: NodeIO, settings: VisionSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: VisionSettings = settings
        self.recorder: Recorder | None = None
        self.reader: SceneDescriber | None = None
        self.bundle: BundleMemory | None = None  # an Omni bundle's vision encoder, for frames kept as tokens
        self.description = ""          # the newest kept frame's description
        self.described_ns = 0          # ... and its frame time
        self.frames = self.kept = self.skipped = 0
        self.read_s = 0.0

    def setup(self) -> None:
        archive = Archive(MemorySettings(root=self.settings.memory_dir, budget_mb=self.settings.memory_mb))
        if self.settings.frontend.startswith("bundle:"):
            from edge.frontend.venus.memory import BundleMemory

            try:
                self.bundle = BundleMemory(Path(self.settings.frontend[len("bundle:"):]).expanduser(),
                                           self.settings.threads)
            except ValueError as exc:
                raise RuntimeError(f"the vision node cannot keep memory: {exc}") from None
            self.recorder = Recorder(archive, encode=self.bundle.frame)
            return
        self.reader = SceneDescriber(threads=self.settings.threads)
        self.recorder = Recorder(archive, describe=self.reader)

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        assert self.recorder is not None
        if isinstance(msg, m.AudioChunk) and (env.payload or msg.silent):
            self.recorder.audio(msg.t_start_ns / 1e9, m.chunk_samples(msg, env.payload))
        elif isinstance(msg, m.VideoFrame) and env.payload:
            late_s = (self.io.clock.now_ns() - msg.t_ns) / 1e9
            if self.settings.realtime and late_s > self.settings.stale_s:
                self.skipped += 1  # a newer frame is already waiting: read that one
                return
            rgb = m.frame_rgb(msg.width, msg.height, msg.encoding, env.payload[0])
            if rgb is None:
                return  # a JPEG that does not decode to its size: no frame to read
            self._look(msg, np.ascontiguousarray(rgb[:, :, ::-1]))  # the gate and OCR take BGR

    def _look(self, msg: m.VideoFrame, bgr: np.ndarray) -> None:
        assert self.recorder is not None
        t0 = time.perf_counter()
        with self.io.busy(READ_BOUND_S):
            decision = self.recorder.frame(msg.t_ns / 1e9, bgr)
        spent = time.perf_counter() - t0
        self.frames += 1
        if decision.kept and self.recorder.last is not None:
            self.kept += 1
            self.read_s += spent
            self.description, self.described_ns = self.recorder.last.description, msg.t_ns
        self.io.publish(m.SceneDescription(msg.index, msg.t_ns, self.description, self.described_ns,
                                           decision.kept, round(spent * 1e3, 1) if decision.kept else 0.0))

    def stats(self) -> dict:
        return {"frames": self.frames, "kept": self.kept, "skipped": self.skipped,
                "read_ms_mean": round(self.read_s / self.kept * 1e3, 1) if self.kept else 0.0}
