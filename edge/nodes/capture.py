"""The capture node: reads audio (and frames), cuts chunks, stamps time once, publishes.

How it paces itself and stamps what it sends depends on the clock, and
lives in capture_pacing.py (one strategy per clock, chosen once). The chunks
the frontend has not decided yet are kept (capture_ring.py) and sent again to
a frontend that restarts.
"""
from __future__ import annotations

import logging

import numpy as np

from edge import messages as m
from edge.audio_format import RATE
from edge.capture.audio import AudioSource, FileAudioSource, open_audio_source
from edge.capture.listener import Activity, DuplexListener
from edge.capture.wake_gate import WakeGate
from edge.capture.frame_codec import as_recorded, encode_frame
from edge.capture.video import VideoSource, open_video_source
from edge.graph.node import Node, NodeIO
from edge.nodes.capture_pacing import BLOCK, RealTimeCapture, VirtualCapture
from edge.nodes.capture_tail import END, WAIT, AnswerWait
from edge.nodes.capture_ring import RING_S, ChunkRing, GiveUpWait
from edge.settings import CaptureSettings
from edge.wire import Envelope
from kernels.resample import float_to_pcm16, pcm16_to_float

log = logging.getLogger(__name__)
RING_WAIT_S = 60.0  # virtual clock: how long to wait for a frontend that decides nothing before going on
PEAK_OVER_GATE_DB = 20.0  # a chunk is quiet only if its loudest sample is also this close to the gate


def quiet(pcm: bytes, gate_dbfs: float) -> bool:
    """Under the noise gate: RMS below `gate_dbfs` and no sample louder than 20 dB above it (a click, an onset).
    Judged on the 16-bit samples, so a replay of the journal judges every chunk the same."""
    x = np.frombuffer(pcm, "<i2").astype(np.float32)
    if not len(x):
        return False
    gate = 32768.0 * 10 ** (gate_dbfs / 20)
    return float(np.sqrt(np.mean(x * x))) < gate and float(np.max(np.abs(x))) < gate * 10 ** (PEAK_OVER_GATE_DB / 20)


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
        self.ring = ChunkRing(int(RING_S * 1000) // settings.chunk_ms)
        self.ring_wait = GiveUpWait(RING_WAIT_S, "capture: the frontend decided nothing for %.0f s; going on without "
                                                 "keeping its chunks", log)
        self.quiet_chunks = 0
        self.last_quiet = True  # the last chunk published was under the noise gate
        self.wake: WakeGate | None = None
        self.decision_wait = GiveUpWait(RING_WAIT_S, "capture: the frontend decided nothing for %.0f s; the wake "
                                                     "word's idle time goes on without its decisions", log)
        self.answers = AnswerWait(settings.answer_wait_s, self.chunk_ns)  # what a file's end waits for
        self.answers.decided = self.index - 1  # restarted: what came before is not waited for again

    def setup(self) -> None:
        self.audio = open_audio_source(self.settings.mic)
        if self.settings.camera is not None and self.settings.video_fps > 0:  # --video-fps 0: the camera stays unread
            self.video = open_video_source(str(self.settings.camera), self.settings.video_fps)
        if isinstance(self.audio, FileAudioSource) and self.index:
            self.audio.seek(self.index * self.chunk_samples)  # resume after a restart
        if self.settings.wake:
            from edge.detect.wake import WakeDetector

            # Real time: a chunk waits for the detector at most a tenth of its length (rarely needed: it is fast).
            self.wake = WakeGate(WakeDetector(self.settings.wake), self.settings.wake_idle_s,
                                 wait_s=None if self.pacing.virtual else self.settings.chunk_ms / 10_000)

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.PlaybackReference):
            samples = pcm16_to_float(env.payload[0]) if env.payload and msg.n_samples else np.zeros(0, np.float32)
            if self.listener is not None:
                self.listener.refs.add(msg.t_ns, samples, msg.sample_rate)
            if self.wake is not None and len(samples) and float(np.abs(samples).max()) > 1e-3:
                self.wake.heard(msg.t_ns + len(samples) * 1_000_000_000 // msg.sample_rate)  # the assistant talks
        elif isinstance(msg, m.Duck) and msg.gain >= 0.999:
            self.ducked = False  # the frontend decided: playback is back to full volume
        elif isinstance(msg, m.ChunkDecision):
            self.ring.on_decided(msg.index)
            self.answers.hear(msg)
            if self.wake is not None and (msg.control == "speak" or msg.user_text or msg.text or msg.delegates):
                self.wake.heard((msg.index + 1) * self.chunk_ns)  # the frontend heard or said something
        elif isinstance(msg, m.ResendChunks):
            self._resend(msg.from_index)
        elif isinstance(msg, (m.DelegateRequest, m.WorkEvent, m.Delivered)):
            self.answers.hear(msg)  # a file session ends once what was delegated is answered

    def _resend(self, from_index: int) -> None:
        """A restarted frontend asks for what it has not decided: send it again from the ring, in order."""
        kept = self.ring.since(from_index)
        if kept and kept[0].chunk.index > from_index:
            log.warning("capture: chunks %d-%d are no longer kept; the frontend resumes at chunk %d", from_index,
                        kept[0].chunk.index - 1, kept[0].chunk.index)
        for k in kept:
            c, frame = k.chunk, k.frame
            extra = {"frame_t_ns": frame[0].t_ns, "width": frame[0].width, "height": frame[0].height,
                     "encoding": frame[0].encoding} if frame else {}
            self.io.publish(m.ResentChunk(c.index, c.t_start_ns, c.t_end_ns, c.sample_rate, c.n_samples, c.silent,
                                          **extra),
                            [k.pcm, frame[1]] if frame else [k.pcm], t_ns=self.pacing.stamp(c.t_end_ns))

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
            self.io.publish(m.EndOfInput(self.index - 1, self.index * self.chunk_ns, self.answers.unanswered))
            return 0.5
        if self.pacing.virtual and (self._held_by_frontend() or self._awaits_decision()):
            return 0.002
        return self.pacing.tick()

    def _awaits_decision(self) -> bool:
        """Virtual clock, in a conversation after the wake word: the idle time counts the frontend's decisions, so
        wait for the previous chunk's before cutting the next (live, decisions come within a chunk anyway)."""
        return self.decision_wait.holds(self.wake is not None and self.wake.awake
                                        and self.ring.decided < self.index - 1)

    def _held_by_frontend(self) -> bool:
        """Virtual clock: wait while the next chunk would push an undecided one out of the ring."""
        return self.ring_wait.holds(self.ring.full(self.index))

    def cut_chunk(self) -> float:
        """Read, clean and publish one whole chunk; the delay until the next tick."""
        assert self.audio is not None
        block = self.audio.read(self.chunk_samples)
        if block is None:
            if self.audio.live:
                return 0.005
            after = self.after_file()
            if after is not None:
                return after
            block = np.zeros(self.chunk_samples, np.float32)
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
        if self.wake is not None and not self.wake.awake:
            return  # waiting for the wake word: nobody is talking to the assistant
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
        if self.wake is not None:
            block, changes = self.wake.gate(self.index, t0, t1, block)
            for c in changes:
                self.io.publish(m.WakeWord(c.kind, self.wake.detector.word, c.t_ns, round(c.probability, 3)),
                                t_ns=self.pacing.stamp(c.t_ns))
        self.pacing.reach(t1)
        frame = self._publish_frames(t0, t1)
        pcm = float_to_pcm16(block)
        silent = quiet(pcm, self.settings.quiet_dbfs)
        self.last_quiet = silent
        if silent:  # a quiet room: the chunk is zeros, said in the header alone (no audio on the bus or in the journal)
            self.quiet_chunks += 1
            pcm = b""
        chunk = m.AudioChunk(self.index, t0, t1, RATE, len(block), silent)
        self.io.publish(chunk, [pcm] if pcm else [])
        dropped = self.ring.dropped
        self.ring.add(chunk, pcm, frame)
        if dropped == 0 and self.ring.dropped:  # said once: the count is in the node's stats
            log.warning("capture: the frontend has not decided the last %.0f s; the oldest chunks are dropped",
                        RING_S)
        self.index += 1
        self.io.control(m.Checkpoint(self.name, {"next_index": self.index, "next_frame": self.frame_index}))

    def quiet_room(self, so_far: np.ndarray) -> bool:
        """The room is quiet: the last chunk was under the noise gate and so is the chunk being cut so far. Its
        pieces then go nowhere before the boundary (nobody is talking, and the journal keeps no audio of it)."""
        return self.last_quiet and quiet(float_to_pcm16(so_far), self.settings.quiet_dbfs)

    def _publish_frames(self, t0: int, t1: int) -> tuple[m.VideoFrame, bytes] | None:
        """Publish the frames due in [t0, t1); the newest of them."""
        newest = None
        if self.video is None:
            return newest
        step = int(1e9 / self.settings.video_fps)
        while self.frame_index * step < t1:
            t = self.frame_index * step
            if t >= t0 or self.video.live:
                sent = self._frame_at(t)
                if sent is not None:
                    w, h, encoding, data = sent
                    newest = (m.VideoFrame(self.frame_index, t, w, h, encoding), data)
                    self.io.publish(newest[0], [newest[1]])
            self.frame_index += 1
        return newest

    def _frame_at(self, t: int) -> tuple[int, int, str, bytes] | None:
        """The frame at t as it goes on the bus (edge/capture/frame_codec.py): a recorded JPEG as it is, else
        scaled down and compressed."""
        assert self.video is not None
        side, quality = self.settings.frame_side, self.settings.frame_quality
        recorded = getattr(self.video, "jpeg_at", lambda _t: None)(t / 1e9)
        sent = as_recorded(recorded, side, quality) if recorded else None
        if sent is not None:
            return sent
        img = self.video.frame_at(t / 1e9)
        return None if img is None else encode_frame(img, side, quality)

    def after_file(self) -> float | None:
        """The file is read: None to cut one more chunk of the quiet room (delegated work is still owed an
        answer), else the delay until the next look (the input has ended when `done` is set)."""
        what = self.answers.after_file(self.index, self.pacing.virtual)
        if what == WAIT:
            return 0.01
        if what == END:
            self.finish()
            return 0.5
        return None

    def finish(self) -> None:
        self.done = True
        self.io.publish(m.EndOfInput(self.index - 1, self.index * self.chunk_ns, self.answers.unanswered))
        if self.answers.unanswered:
            log.info("capture: %s", self.answers.unanswered)
        log.info("capture: input ended after %d chunks", self.index)

    def stats(self) -> dict:
        out = {"chunks": self.index, "quiet": self.quiet_chunks, "resent": self.ring.resent,
               "ring_dropped": self.ring.dropped}
        if self.listener is not None:
            out.update(self.listener.stats(), ducks=self.ducks)
        if self.wake is not None:
            out.update(self.wake.stats())
        return out

    def close(self) -> None:
        if self.wake is not None:
            self.wake.close()
        for src in (self.audio, self.video):
            if src is not None:
                src.close()
