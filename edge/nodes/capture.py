"""The capture node: reads audio (and frames), cuts chunks, stamps time once, publishes.

How it paces itself and stamps what it sends depends on the clock, and
lives in capture_pacing.py (one strategy per clock, chosen once).
"""
from __future__ import annotations

import logging

import numpy as np

from edge import messages as m
from edge.audio_format import RATE
from edge.capture.audio import AudioSource, FileAudioSource, open_audio_source
from edge.capture.listener import Activity, DuplexListener
from edge.capture.video import VideoSource, open_video_source
from edge.graph.node import Node, NodeIO
from edge.nodes.capture_pacing import BLOCK, RealTimeCapture, VirtualCapture
from edge.settings import CaptureSettings
from edge.wire import Envelope
from kernels.resample import float_to_pcm16, pcm16_to_float

log = logging.getLogger("edge.capture")


class CaptureNode(Node):
    name = "capture"
    settings_type = CaptureSettings

    def __init__(self, io: NodeIO, settings: CaptureSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: CaptureSettings = settings
        self.chunk_ns = settings.chunk_ns
        self.chunk_samples = RATE * settings.chunk_ms // 1000
        self.pacing = VirtualCapture(self) if io.clock.virtual else RealTimeCapture(self)
        self.audio: AudioSource | None = None
        self.video: VideoSource | None = None
        self.index = int(restore.get("next_index", 0))
        self.frame_index = int(restore.get("next_frame", 0))
        self.listener: DuplexListener | None = None
        self.ducked = False
        self.ducks = 0

    def setup(self) -> None:
        self.audio = open_audio_source(self.settings.mic)
        if self.settings.camera is not None and self.settings.video_fps > 0:  # --video-fps 0: the camera stays unread
            self.video = open_video_source(str(self.settings.camera), self.settings.video_fps)
        if isinstance(self.audio, FileAudioSource) and self.index:
            self.audio.seek(self.index * self.chunk_samples)  # resume after a restart

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.PlaybackReference) and self.listener is not None:
            samples = pcm16_to_float(env.payload[0]) if env.payload and msg.n_samples else np.zeros(0, np.float32)
            self.listener.refs.add(msg.t_ns, samples, msg.sample_rate)
        elif isinstance(msg, m.Duck) and msg.gain >= 0.999:
            self.ducked = False  # the frontend decided: playback is back to full volume

    def start(self) -> None:
        d = self.settings.duplex
        if d.cancel or d.room is not None or d.detect:
            # Built after the handshake: loading the VAD must not hold up a restarted capture node.
            try:
                self.listener = DuplexListener(cancel=d.cancel, room=d.room, detect=d.detect,
                                               threads=self.settings.threads, virtual=self.pacing.virtual)
            except (RuntimeError, ImportError, OSError) as exc:  # a missing package: go on without it
                log.warning("capture: no echo cancellation or barge-in ducking: %s", exc)

    def tick(self) -> float | None:
        if self.done:
            # Repeat the end marker: a node restarted after it went out must still hear it.
            self.io.publish(m.EndOfInput(self.index - 1, self.index * self.chunk_ns))
            return 0.5
        return self.pacing.tick()

    def cut_chunk(self) -> float:
        """Read, clean and publish one whole chunk; the delay until the next tick."""
        assert self.audio is not None
        block = self.audio.read(self.chunk_samples)
        if block is None:
            if self.audio.live:
                return 0.005
            self.finish()
            return 0.5
        if len(block) < self.chunk_samples:
            block = np.concatenate([block, np.zeros(self.chunk_samples - len(block), np.float32)])
        if self.listener is not None:
            block = np.concatenate([self.listen(block[i:i + BLOCK], self.index * self.chunk_samples + i)
                                    for i in range(0, len(block), BLOCK)])
        self.publish_chunk(block)
        return 0.0

    def listen(self, block: np.ndarray, start: int) -> np.ndarray:
        """Echo-cancel one block starting at sample `start`, and report speech onsets and offsets in it."""
        assert self.listener is not None
        clean, events = self.listener.process(block, start)
        for ev in events:
            self._on_activity(ev)
        return clean

    def _on_activity(self, ev: Activity) -> None:
        stamp = self.pacing.stamp(ev.t_ns)
        if ev.kind == "onset" and ev.playback and not self.ducked:
            # Barge-in suspected: lower the assistant's voice now; the frontend decides at the boundary.
            self.ducked = True
            self.ducks += 1
            self.io.publish(m.Duck(self.settings.duplex.duck_gain, "speech onset", ev.onset_ns), t_ns=stamp)
            self.pacing.ducked(ev)
        self.io.publish(m.SpeechActivity(ev.kind, ev.onset_ns, ev.t_ns, round(ev.level_db, 1),
                                         round(ev.voiced_ms, 1), ev.playback), t_ns=stamp)

    def publish_chunk(self, block: np.ndarray) -> None:
        t0, t1 = self.index * self.chunk_ns, (self.index + 1) * self.chunk_ns
        self.pacing.reach(t1)
        self._publish_frames(t0, t1)
        self.io.publish(m.AudioChunk(self.index, t0, t1, RATE, len(block)), [float_to_pcm16(block)])
        self.index += 1
        self.io.control(m.Checkpoint(self.name, {"next_index": self.index, "next_frame": self.frame_index}))

    def _publish_frames(self, t0: int, t1: int) -> None:
        if self.video is None:
            return
        step = int(1e9 / self.settings.video_fps)
        while self.frame_index * step < t1:
            t = self.frame_index * step
            if t >= t0 or self.video.live:
                img = self.video.frame_at(t / 1e9)
                if img is not None:
                    h, w = img.shape[:2]
                    self.io.publish(m.VideoFrame(self.frame_index, t, w, h, "rgb24"),
                                    [np.ascontiguousarray(img, dtype=np.uint8).tobytes()])
            self.frame_index += 1

    def finish(self) -> None:
        self.done = True
        self.io.publish(m.EndOfInput(self.index - 1, self.index * self.chunk_ns))
        log.info("capture: input ended after %d chunks", self.index)

    def stats(self) -> dict:
        out = {"chunks": self.index}
        if self.listener is not None:
            out.update(self.listener.stats(), ducks=self.ducks)
        return out

    def close(self) -> None:
        for src in (self.audio, self.video):
            if src is not None:
                src.close()
