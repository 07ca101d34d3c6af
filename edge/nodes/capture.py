"""The capture node: reads audio (and frames), cuts chunks, stamps time once, publishes."""
from __future__ import annotations

import logging
import time

import numpy as np

from edge import messages as m
from edge.capture.audio import RATE, AudioSource, FileAudioSource, open_audio_source
from edge.capture.video import VideoSource, open_video_source
from edge.clock import VirtualClock
from edge.capture.listener import Activity, DuplexListener
from edge.settings import duplex_settings
from edge.graph.node import Node, NodeIO
from edge.wire import Envelope
from kernels.resample import float_to_pcm16, pcm16_to_float

log = logging.getLogger("edge.capture")


BLOCK = 320  # 20 ms: echo cancellation and onset detection run on blocks this size
REF_WAIT_S = 60.0  # virtual clock: how long to wait for the playback reference before going on without it


class CaptureNode(Node):
    name = "capture"
    subscribes = ("media.playref", "dlg.duck")

    def __init__(self, io: NodeIO, config: dict, restore: dict) -> None:
        super().__init__(io, config, restore)
        self.chunk_ns = int(config.get("chunk_ms", 1000)) * 1_000_000
        self.chunk_samples = RATE * int(config.get("chunk_ms", 1000)) // 1000
        self.pace = float(config.get("pace", 1.0))  # >1 feeds a file faster than real time
        self.virtual = isinstance(io.clock, VirtualClock)
        self.fps = float(config.get("video_fps", 1.0))
        self.audio: AudioSource | None = None
        self.video: VideoSource | None = None
        self.index = int(restore.get("next_index", 0))
        self.frame_index = int(restore.get("next_frame", 0))
        self.last_end_repeat = 0.0
        self.t_started = 0.0
        self.duplex = duplex_settings({})  # the session's own settings are read (and checked) in setup
        self.listener: DuplexListener | None = None
        self.pending = np.zeros(0, np.float32)  # live input: blocks of the chunk being cut
        self.ducked = False
        self.ducks = 0
        self.ref_wait_since: float | None = None
        self.ref_wait_given_up = False
        self.ref_misses = 0

    def setup(self) -> None:
        self.audio = open_audio_source(self.config.get("mic"))
        if self.config.get("camera") is not None and self.fps > 0:  # --video-fps 0: the camera stays unread
            self.video = open_video_source(str(self.config["camera"]), self.fps)
        if isinstance(self.audio, FileAudioSource) and self.index:
            self.audio.seek(self.index * self.chunk_samples)  # resume after a restart
        self.duplex = duplex_settings(self.config)

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.PlaybackReference) and self.listener is not None:
            samples = pcm16_to_float(env.payload[0]) if env.payload and msg.n_samples else np.zeros(0, np.float32)
            self.listener.refs.add(msg.t_ns, samples, msg.sample_rate)
        elif isinstance(msg, m.Duck) and msg.gain >= 0.999:
            self.ducked = False  # the frontend decided: playback is back to full volume

    def start(self) -> None:
        self.t_started = time.monotonic()
        d = self.duplex
        if d.cancel or d.room is not None or d.detect:
            # Built after the handshake: loading the VAD must not hold up a restarted capture node.
            try:
                self.listener = DuplexListener(cancel=d.cancel, room=d.room, detect=d.detect,
                                               threads=int(self.config.get("threads", 1) or 1),
                                               virtual=self.virtual)
            except (RuntimeError, ImportError, OSError) as exc:  # a missing package: go on without it
                log.warning("capture: no echo cancellation or barge-in ducking: %s", exc)

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
        if self.listener is not None and not self.virtual:
            return self._tick_blocks()
        if not self.audio.live and not self.virtual:
            wait = self._due_ns(self.index) - clock.now_ns()
            if wait > 0:
                return wait / 1e9
        if self.virtual and self.duplex.reference and self.listener is not None and not self._reference_ready():
            return 0.001  # the speech node has not yet handed over what plays during this chunk
        block = self.audio.read(self.chunk_samples)
        if block is None:
            if self.audio.live:
                return 0.005
            self._finish()
            return 0.5
        if len(block) < self.chunk_samples:
            block = np.concatenate([block, np.zeros(self.chunk_samples - len(block), np.float32)])
        if self.listener is not None:
            block = np.concatenate([self._listen(block[i:i + BLOCK], self.index * self.chunk_samples + i)
                                    for i in range(0, len(block), BLOCK)])
        self._publish_chunk(block)
        return 0.0

    def _reference_ready(self) -> bool:
        """Virtual clock: the reference must cover chunk k (handed over after chunk k-1's decision)."""
        assert self.listener is not None
        if self.index == 0 or self.ref_wait_given_up:
            return True
        if self.listener.refs.covered_ns >= (self.index + 1) * self.chunk_ns:
            self.ref_wait_since = None
            return True
        now = time.monotonic()
        self.ref_wait_since = self.ref_wait_since or now
        if now - self.ref_wait_since > REF_WAIT_S:
            self.ref_misses += 1
            self.ref_wait_since = None
            self.ref_wait_given_up = self.ref_misses >= 3  # no speech node answers: stop waiting for one
            log.warning("capture: no playback reference for chunk %d after %.0f s; going on without it%s",
                        self.index, REF_WAIT_S, " (and no longer waiting)" if self.ref_wait_given_up else "")
            return True
        return False

    def _tick_blocks(self) -> float:
        """Real time: clean and watch 20 ms at a time, so a duck goes out within a block of the onset."""
        assert self.audio is not None
        start = self.index * self.chunk_samples + len(self.pending)
        if not self.audio.live:  # a file paced in real time: each block when its last sample is due
            wait = int((start + BLOCK) * 1e9 / RATE / self.pace) - self.io.clock.now_ns()
            if wait > 0:
                return wait / 1e9
        block = self.audio.read(BLOCK)
        if block is None:
            if self.audio.live:
                return 0.005
            if len(self.pending):
                self._publish_chunk(np.concatenate([self.pending, np.zeros(self.chunk_samples - len(self.pending),
                                                                           np.float32)]))
                self.pending = np.zeros(0, np.float32)
            self._finish()
            return 0.5
        self.pending = np.concatenate([self.pending, self._listen(block, start)])
        if len(self.pending) >= self.chunk_samples:
            chunk, self.pending = self.pending[:self.chunk_samples], self.pending[self.chunk_samples:]
            self._publish_chunk(chunk)
        return 0.0

    def _listen(self, block: np.ndarray, start: int) -> np.ndarray:
        assert self.listener is not None
        clean, events = self.listener.process(block, start)
        for ev in events:
            self._on_activity(ev)
        return clean

    def _on_activity(self, ev: Activity) -> None:
        stamp = ev.t_ns if self.virtual else None
        if ev.kind == "onset" and ev.playback and not self.ducked:
            # Barge-in suspected: lower the assistant's voice now; the frontend decides at the boundary.
            self.ducked = True
            self.ducks += 1
            self.io.publish(m.Duck(self.duplex.duck_gain, "speech onset", ev.onset_ns), t_ns=stamp)
            if self.virtual and self.listener is not None:
                self.listener.refs.scale_from(ev.t_ns, self.duplex.duck_gain)  # the speech node does the same
        self.io.publish(m.SpeechActivity(ev.kind, ev.onset_ns, ev.t_ns, round(ev.level_db, 1),
                                         round(ev.voiced_ms, 1), ev.playback), t_ns=stamp)

    def _publish_chunk(self, block: np.ndarray) -> None:
        clock = self.io.clock
        t0, t1 = self.index * self.chunk_ns, (self.index + 1) * self.chunk_ns
        if isinstance(clock, VirtualClock):
            clock.advance_to(t1)
        self._publish_frames(t0, t1)
        self.io.publish(m.AudioChunk(self.index, t0, t1, RATE, len(block)), [float_to_pcm16(block)])
        self.index += 1
        self.io.control(m.Checkpoint(self.name, {"next_index": self.index, "next_frame": self.frame_index}))

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
        out = {"chunks": self.index}
        if self.listener is not None:
            out.update(self.listener.stats(), ducks=self.ducks)
        return out

    def close(self) -> None:
        for src in (self.audio, self.video):
            if src is not None:
                src.close()
