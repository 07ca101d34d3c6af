"""The capture node: reads audio (and frames), cuts chunks, stamps time once, publishes."""
from __future__ import annotations

import logging
import time

import numpy as np

from edge import messages as m
from edge.capture.audio import RATE, AudioSource, FileAudioSource, open_audio_source
from edge.capture.video import VideoSource, open_video_source
from edge.clock import VirtualClock
from edge.graph.node import Node, NodeIO
from kernels.resample import float_to_pcm16

log = logging.getLogger("edge.capture")


class CaptureNode(Node):
    name = "capture"

    def __init__(self, io: NodeIO, config: dict, restore: dict) -> None:
        super().__init__(io, config, restore)
        self.chunk_ns = int(config.get("chunk_ms", 1000)) * 1_000_000
        self.chunk_samples = RATE * int(config.get("chunk_ms", 1000)) // 1000
        self.pace = float(config.get("pace", 1.0))  # >1 feeds a file faster than real time
        self.fps = float(config.get("video_fps", 1.0))
        self.audio: AudioSource | None = None
        self.video: VideoSource | None = None
        self.index = int(restore.get("next_index", 0))
        self.frame_index = int(restore.get("next_frame", 0))
        self.last_end_repeat = 0.0
        self.t_started = 0.0

    def setup(self) -> None:
        self.audio = open_audio_source(self.config.get("mic"))
        if self.config.get("camera") is not None:
            self.video = open_video_source(str(self.config["camera"]), self.fps)
        if isinstance(self.audio, FileAudioSource) and self.index:
            self.audio.seek(self.index * self.chunk_samples)  # resume after a restart

    def start(self) -> None:
        self.t_started = time.monotonic()

    def _due_ns(self, k: int) -> int:
        """When chunk k's last sample is there (file sessions paced in real time)."""
        return int((k + 1) * self.chunk_ns / self.pace)

    def tick(self) -> float | None:
        if self.done:
            # Repeat the end marker: a node restarted after it went out must still hear it.
            self.io.publish(m.EndOfInput(self.index - 1, self.index * self.chunk_ns))
            return 0.5
        assert self.audio is not None
        clock = self.io.clock
        virtual = isinstance(clock, VirtualClock)
        if not self.audio.live and not virtual:
            wait = self._due_ns(self.index) - clock.now_ns()
            if wait > 0:
                return wait / 1e9
        block = self.audio.read(self.chunk_samples)
        if block is None:
            if self.audio.live:
                return 0.005
            self._finish()
            return 0.5
        if len(block) < self.chunk_samples:
            block = np.concatenate([block, np.zeros(self.chunk_samples - len(block), np.float32)])
        t0, t1 = self.index * self.chunk_ns, (self.index + 1) * self.chunk_ns
        if virtual:
            clock.advance_to(t1)  # type: ignore[attr-defined]
        self._publish_frames(t0, t1)
        self.io.publish(m.AudioChunk(self.index, t0, t1, RATE, len(block)), [float_to_pcm16(block)])
        self.index += 1
        self.io.control(m.Checkpoint(self.name, {"next_index": self.index, "next_frame": self.frame_index}))
        return 0.0

    def _publish_frames(self, t0: int, t1: int) -> None:
        if self.video is None:
            return
        step = int(1e9 / self.fps)
        while self.frame_index * step < t1:
            t = self.frame_index * step
            if t >= t0 or self.video.live:
                img = self.video.frame_at(t / 1e9)
                if img is not None:
                    h, w = img.shape[:2]
                    self.io.publish(m.VideoFrame(self.frame_index, t, w, h, "rgb24"),
                                    [np.ascontiguousarray(img, dtype=np.uint8).tobytes()])
            self.frame_index += 1

    def _finish(self) -> None:
        self.done = True
        self.io.publish(m.EndOfInput(self.index - 1, self.index * self.chunk_ns))
        log.info("capture: input ended after %d chunks", self.index)

    def stats(self) -> dict:
        return {"chunks": self.index}

    def close(self) -> None:
        for src in (self.audio, self.video):
            if src is not None:
                src.close()
