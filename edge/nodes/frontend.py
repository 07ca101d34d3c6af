"""The frontend node: the chunk loop. One `step(chunk)` per chunk boundary, then speech, delegates, epochs."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from edge import messages as m
from edge.bargein.judge import BargeInJudge
from edge.frontend.base import Chunk, Frame, Frontend, ResultToSay
from edge.frontend.factory import build_frontend
from edge.graph.node import Node, NodeIO
from edge.settings import FrontendSettings
from edge.wire import Envelope
from kernels.resample import pcm16_to_float

log = logging.getLogger("edge.frontend")


@dataclass
class _Reply:
    """The speech of one harness result: delivered once every piece has been played."""

    work_id: str
    speaks: set[str] = field(default_factory=set)
    closed: bool = False


class FrontendNode(Node):
    name = "frontend"
    settings_type = FrontendSettings

    def __init__(self, io: NodeIO, settings: FrontendSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: FrontendSettings = settings
        self.frontend: Frontend | None = None
        self.frames: list[Frame] = []
        self.utterance = int(restore.get("utterance", 0))
        self.in_turn = False
        self.playback_active = False
        self.last_index = -1
        self.end: m.EndOfInput | None = None
        self.replies: dict[str, _Reply] = {}
        self.speak_to_backend: dict[str, str] = {}
        self.backend_texts: dict[str, tuple[str, str]] = {}  # result id -> (work id, text)
        self.chunks = 0
        self.compute_ns_total = 0
        self.audio_ns_total = 0
        self.judge: BargeInJudge | None = None

    def setup(self) -> None:
        # One step runs models and sends no heartbeat meanwhile; on a loaded CPU it can take many seconds.
        self.busy_s = self.settings.frontend_busy_s
        self.frontend = build_frontend(self.settings.frontend, self.settings.models)
        if self.settings.barge_in:
            self.judge = BargeInJudge(self.frontend, self.settings.models)
        if self.restore.get("epoch"):
            self.io.epoch = int(self.restore["epoch"])

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.AudioChunk):
            self._step(env, msg)
        elif isinstance(msg, m.VideoFrame):
            img = np.frombuffer(env.payload[0], np.uint8).reshape(msg.height, msg.width, 3) if env.payload else None
            if img is not None:
                self.frames.append(Frame(msg.t_ns, img))
        elif isinstance(msg, m.PlaybackState):
            self.playback_active = msg.active
        elif isinstance(msg, m.PlaybackAck):
            self._on_played(msg)
        elif isinstance(msg, m.BackendResult):
            assert self.frontend is not None
            self.backend_texts[msg.id] = (msg.work_id, msg.text)
            self.frontend.deliver(ResultToSay(msg.id, msg.text, msg.work_id))
        elif isinstance(msg, (m.SpeechActivity, m.Duck)) and self.judge is not None:
            self.judge.on_message(env)
        elif isinstance(msg, m.EndOfInput) and self.end is None:
            self.end = msg
            self._maybe_done()

    def _step(self, env: Envelope, msg: m.AudioChunk) -> None:
        assert self.frontend is not None
        audio = pcm16_to_float(env.payload[0]) if env.payload else np.zeros(0, np.float32)
        frames = [f for f in self.frames if f.t_ns < msg.t_end_ns]
        self.frames = [f for f in self.frames if f.t_ns >= msg.t_end_ns]
        # Capture's onset of speech over playback reaches the chunk (its SpeechActivity came before this chunk).
        onset = self.judge.overlap_onset(msg.t_start_ns, msg.t_end_ns) if self.judge is not None else None
        chunk = Chunk(msg.index, msg.t_start_ns, msg.t_end_ns, audio, frames, msg.sample_rate,
                      playback_active=self.playback_active, user_speech_onset_ns=onset)
        t_call = time.monotonic_ns()
        recv_delay = self.io.clock.now_ns() - env.t_ns
        out = self.frontend.step(chunk)
        if self.judge is not None:  # the barge-in policy has the last word on speech over the reply
            restore = self.judge.decide(chunk, out)
            if restore is not None:
                self.io.publish(restore)
        compute = time.monotonic_ns() - t_call
        span = msg.t_end_ns - msg.t_start_ns
        self.chunks += 1
        self.compute_ns_total += compute
        self.audio_ns_total += span
        if out.interrupt:  # sent first: the decision below is then the first data message of the new epoch
            self.io.interrupt("barge-in", chunk.user_speech_onset_ns)
            self.in_turn = False
        self.io.publish(m.ChunkDecision(
            msg.index, out.control, out.text, out.user_text, out.turn_end, out.interrupt, len(out.delegates),
            recv_delay, compute, compute / span if span else 0.0, out.info))
        if out.text:
            if not self.in_turn:
                self.utterance += 1
                self.in_turn = True
            speak_id = self.io.new_id()
            states, payload = out.speech, ()
            if states is not None and len(states.token_ids):  # hidden states travel as a raw payload frame
                payload = (np.ascontiguousarray(states.hidden, np.float16).tobytes(),)
            self.io.publish(m.SpeakText(speak_id, self.utterance, msg.index, out.text, self.io.epoch,
                                        out.backend_id, list(states.token_ids) if payload else [],
                                        int(states.hidden.shape[1]) if payload else 0), payload)
            if out.backend_id:
                work_id = self.backend_texts.get(out.backend_id, ("", ""))[0]
                reply = self.replies.setdefault(out.backend_id, _Reply(work_id))
                reply.speaks.add(speak_id)
                self.speak_to_backend[speak_id] = out.backend_id
        if out.turn_end or out.interrupt:
            self.in_turn = False
            for reply in self.replies.values():
                reply.closed = True
        for span_ in out.delegates:
            self.io.publish(m.DelegateRequest(self.io.new_id(), span_.instruction, span_.opened_ns, msg.index,
                                              span_.closed_by))
        self.last_index = msg.index
        self.io.control(m.Checkpoint(self.name, {"utterance": self.utterance, "epoch": self.io.epoch}))
        self._maybe_done()

    def _on_played(self, ack: m.PlaybackAck) -> None:
        bid = self.speak_to_backend.get(ack.speak_id)
        if bid is None or not ack.last:
            return
        reply = self.replies.get(bid)
        if reply is None:
            return
        reply.speaks.discard(ack.speak_id)
        if reply.closed and not reply.speaks:
            self.io.publish(m.Delivered(self.io.new_id(), reply.work_id or bid, bid))
            del self.replies[bid]

    def _maybe_done(self) -> None:
        # Capture sends its end marker after its last chunk on the same ordered path, so once it is
        # here every chunk this node will ever get has been stepped (also true after a restart).
        if self.end is not None and not self.done:
            self.done = True
            self.io.publish(m.FrontendDone(self.end.last_index, self.end.t_end_ns))

    def tick(self) -> float | None:
        if self.done and self.end is not None:
            self.io.publish(m.FrontendDone(self.end.last_index, self.end.t_end_ns))  # for a restarted speech node
        return 0.5

    def stats(self) -> dict:
        rtf = self.compute_ns_total / self.audio_ns_total if self.audio_ns_total else 0.0
        return {"chunks": self.chunks, "rtf": round(rtf, 4)}

    def close(self) -> None:
        if self.frontend is not None:
            self.frontend.close()
