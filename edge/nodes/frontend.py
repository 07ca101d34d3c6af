"""The frontend node: the chunk loop. One `step(chunk)` per chunk boundary, then speech, delegates, epochs.

Chunks are stepped strictly in order, each once. After every step the node
writes what a restart needs (frontend_state.py): a restarted node reads it
back, rebuilds the frontend's conversation (`Frontend.resume`), sends again
what was never acknowledged, and asks capture for the chunks it has not
decided (capture keeps them); chunks that arrive ahead of a gap wait for it.
Live, capture also hands over the chunk being cut in pieces (AudioSoFar): the
frontend hears them before the boundary (`Frontend.hear_ahead`), and the
first words it drafts there go to the voice (DraftAhead).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from edge import messages as m
from edge.bargein.judge import BargeInJudge
from edge.bargein.overlap_asr import OverlapTranscriber
from edge.frontend.base import Chunk, Frame, Frontend, ResultToSay
from edge.frontend.factory import build_frontend
from edge.graph.node import Node, NodeIO
from edge.nodes.frontend_delivery import ResultDelivery
from edge.nodes.frontend_state import StepFiles, state_folder
from edge.nodes.new_question import asked_anew, asked_to_stop
from edge.settings import FrontendSettings
from edge.wire import Envelope

log = logging.getLogger(__name__)
ASK_AGAIN_S = 1.0  # a gap in the chunks: how often capture is asked for them again
GAP_GIVE_UP_S = 10.0  # ... and when to go on without them (capture no longer keeps them)
SIGHT_WAIT_S = 120.0  # virtual clock: how long a chunk waits for its frames' descriptions before going without


@dataclass
class _SoFar:
    """The chunk being cut, as far as capture has handed it over before its boundary."""

    index: int
    t_start_ns: int
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))


class FrontendNode(Node):
    name = "frontend"
    settings_type = FrontendSettings

    def __init__(self, io: NodeIO, settings: FrontendSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: FrontendSettings = settings
        self.frontend: Frontend | None = None
        self.frames: list[Frame] = []
        self.utterance = 0
        self.in_turn = False
        self.playback_active = False
        self.next_index = 0  # the next chunk to step: every chunk before it has been decided
        self.held: dict[int, Envelope] = {}  # chunks that came ahead of a gap
        self.gap_since: float | None = None
        self.asked_at: float | None = None
        self.end: m.EndOfInput | None = None
        self.delivery = ResultDelivery()  # what became of each harness result
        self.chunks = 0
        self.compute_ns_total = 0
        self.audio_ns_total = 0
        self.judge: BargeInJudge | None = None
        self.files = StepFiles(state_folder(restore))
        self.gen = 0  # steps written to the step files
        self.saved = self.files.newest() if restore else None
        self.restored: dict | None = None  # what a restart rebuilt, for the first decision's journal record
        self.described_ns = -1  # the newest frame time the vision node has described
        self.sight_since: float | None = None  # when the next chunk started waiting for descriptions
        self.so_far: _SoFar | None = None  # the next chunk, handed over in pieces before its boundary

    def setup(self) -> None:
        self.frontend = build_frontend(self.settings.frontend, self.settings.models)
        if self.settings.barge_in:
            self.judge = BargeInJudge(self.frontend, self.settings.models)
            if not self.judge.frontend_hears:  # the judge reads the overlapping speech itself
                live = self.settings.realtime
                self.judge.transcriber = OverlapTranscriber.load(self.settings.models, preload=live)
        if self.restore.get("epoch"):
            self.io.epoch = int(self.restore["epoch"])
        gen, state = self.saved or (0, {})
        folder = self.files.folder / "frontend"
        folder.mkdir(exist_ok=True)
        t0 = time.monotonic()
        rebuilt = self.frontend.resume(folder, state.get("frontend", {}))
        if self.saved is not None:
            self._restore_node(gen, state.get("node", {}))
            self.restored = {"next_index": self.next_index, "rebuild_ms": round((time.monotonic() - t0) * 1e3, 1),
                             **rebuilt}
            log.info("frontend: restarted at chunk %d: %s", self.next_index, self.restored)
        self.io.control(m.Checkpoint(self.name, self._checkpoint()))

    def start(self) -> None:
        if self.saved is None:
            return
        # The volume a duck lowered is restored by the decision that was lost with the earlier life.
        self.io.publish(m.Duck(1.0, "frontend restarted"))
        for msg_id, frames in self.saved[1].get("outbox", []):
            self.io.send_again(msg_id, frames)
        self._ask_for_chunks()
        self.saved = None

    def _restore_node(self, gen: int, st: dict) -> None:
        self.gen = gen
        self.next_index = int(st.get("next_index", 0))
        self.utterance = int(st.get("utterance", 0))
        self.in_turn = bool(st.get("in_turn", False))
        self.playback_active = bool(st.get("playback_active", False))
        self.io.epoch = max(self.io.epoch, int(st.get("epoch", 0)))
        self.delivery.restore(st)

    def _checkpoint(self) -> dict:
        """The small state the supervisor hands back on a restart: where the step files are, and a summary."""
        return {"dir": str(self.files.folder), "gen": self.gen, "next_index": self.next_index,
                "utterance": self.utterance, "epoch": self.io.epoch}

    def _commit(self) -> None:
        """After a step: write what a restart needs, then tell the supervisor."""
        assert self.frontend is not None
        self.gen += 1
        node = {"next_index": self.next_index, "utterance": self.utterance, "in_turn": self.in_turn,
                "playback_active": self.playback_active, "epoch": self.io.epoch, **self.delivery.state()}
        self.files.write(self.gen, {"node": node, "frontend": self.frontend.checkpoint(),
                                    "outbox": [[i, f] for i, f in self.io.unacked()]})
        self.io.control(m.Checkpoint(self.name, self._checkpoint()))

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, (m.AudioChunk, m.ResentChunk)):
            self._arrive(env)
        elif isinstance(msg, m.AudioSoFar):
            self._hear_ahead(env, msg)
        elif isinstance(msg, m.VideoFrame):
            img = m.frame_rgb(msg.width, msg.height, msg.encoding, env.payload[0]) if env.payload else None
            if img is not None:  # a JPEG that does not decode to its size is no frame: dropped, not a crash
                self.frames.append(Frame(msg.t_ns, img))
        elif isinstance(msg, m.TypedText):
            assert self.frontend is not None
            if not self.frontend.type_text(msg.text):
                log.warning("frontend: typed text is read only by a bundle's model, and only when it has words; "
                            "ignored: %r", msg.text[:80])
        elif isinstance(msg, m.SceneDescription):
            assert self.frontend is not None
            if msg.t_ns > self.described_ns:
                self.described_ns = msg.t_ns
                self.frontend.see(msg.t_described_ns, msg.text)
            self._drain()
        elif isinstance(msg, m.PlaybackState):
            self.playback_active = msg.active
        elif isinstance(msg, m.PlaybackAck):
            self._on_played(msg)
        elif isinstance(msg, m.BackendResult):
            assert self.frontend is not None
            result = self.delivery.received(msg)
            if result is not None:
                self.frontend.deliver(result)
                self._result_ahead(result)
            self._commit()  # written down before the runner acknowledges it: a restart still says it (or not)
        elif isinstance(msg, (m.SpeechActivity, m.Duck)) and self.judge is not None:
            self.judge.on_message(env)
        elif isinstance(msg, m.EndOfInput) and self.end is None:
            self.end = msg
            self._maybe_done()

    # --- the chunk being cut ------------------------------------------------------------------
    def _hear_ahead(self, env: Envelope, msg: m.AudioSoFar) -> None:
        """A piece of the chunk being cut: the frontend hears it before the boundary, while that chunk is the
        next to step and nothing waits before it (it hears the audio in order, once). Words it drafts go to
        the voice at once, to be made ready."""
        assert self.frontend is not None
        if msg.index != self.next_index or self.held or self.sight_since is not None:
            self.so_far = None  # the loop is behind: the boundary comes before anything could be made ready
            return
        ns_per_sample = 1_000_000_000 // msg.sample_rate
        have = self.so_far
        if have is None or have.index != msg.index:
            have = self.so_far = _SoFar(msg.index, msg.t_start_ns)
        if msg.t_from_ns != have.t_start_ns + len(have.audio) * ns_per_sample:
            self.so_far = None  # a piece is missing: this chunk waits for its boundary
            return
        piece = np.frombuffer(env.payload[0], "<i2").astype(np.float32) / 32768.0 if env.payload else \
            np.zeros(0, np.float32)
        have.audio = np.concatenate([have.audio, piece])
        so_far = Chunk(msg.index, msg.t_start_ns, msg.t_end_ns, have.audio, [], msg.sample_rate,
                       playback_active=self.playback_active)
        with self.io.busy(self.settings.frontend_busy_s):
            ahead = self.frontend.hear_ahead(so_far)
        if ahead is not None and ahead.text.strip():
            self.io.publish(m.DraftAhead(msg.index, msg.t_end_ns, ahead.text, ahead.user_end_ns, ahead.heard,
                                         ahead.info))

    def _result_ahead(self, result: ResultToSay) -> None:
        """Live, a result the next boundary will say: its words go to the voice now, so that they play as soon
        as that boundary speaks them instead of being synthesized then (on the virtual clock the voice makes
        nothing ahead)."""
        assert self.frontend is not None
        words = self.frontend.result_ahead(result) if self.settings.realtime else ""
        if words.strip():
            self.io.publish(m.DraftAhead(self.next_index, max(0, self.io.clock.now_ns()), words,
                                         info={"result": result.id}))

    # --- chunks in order ---------------------------------------------------------------------
    def _arrive(self, env: Envelope) -> None:
        """Step the chunk if it is the next one (then any held behind it); hold it if one is missing."""
        msg = env.msg
        if msg.index < self.next_index:
            return  # already decided (sent again after a restart)
        if isinstance(msg, m.ResentChunk) and msg.frame_t_ns is not None and len(env.payload) > 1 and \
                (img := m.frame_rgb(msg.width, msg.height, msg.encoding, env.payload[1])) is not None:
            self.frames = sorted([*self.frames, Frame(msg.frame_t_ns, img)], key=lambda f: f.t_ns)
        self.held[msg.index] = env
        self._drain()

    def _drain(self) -> None:
        while self.next_index in self.held:
            if self._waits_for_sight(self.held[self.next_index].msg):
                return  # not a gap: vision is still reading the chunk's frames
            env = self.held.pop(self.next_index)
            self._step(env, env.msg)
        if self._missing():
            self.gap_since = self.gap_since or time.monotonic()
            if self.asked_at is None or time.monotonic() - self.asked_at >= ASK_AGAIN_S:
                self._ask_for_chunks()
        else:
            self.gap_since = self.asked_at = None

    def _waits_for_sight(self, msg: m.AudioChunk | m.ResentChunk) -> bool:
        """On the virtual clock with a vision node, a chunk is stepped once its frames are described, so the
        answer to "what does this say?" does not depend on how fast the machine reads; in real time never."""
        if not self.settings.sees or self.settings.realtime:
            return False
        if not any(self.described_ns < f.t_ns < msg.t_end_ns for f in self.frames):
            self.sight_since = None
            return False
        self.sight_since = self.sight_since or time.monotonic()
        if time.monotonic() - self.sight_since > SIGHT_WAIT_S:
            log.warning("frontend: no scene description for %.0f s; chunk %d goes on without it",
                        SIGHT_WAIT_S, msg.index)
            self.described_ns = max(f.t_ns for f in self.frames if f.t_ns < msg.t_end_ns)
            self.sight_since = None
            return False
        return True

    def _missing(self) -> bool:
        """A chunk before the next one present is missing (or the input ended and some were never stepped)."""
        ended = self.end is not None and self.next_index <= self.end.last_index
        return bool(self.held) or ended

    def _ask_for_chunks(self) -> None:
        self.asked_at = time.monotonic()
        self.io.publish(m.ResendChunks(self.next_index))

    def _give_up_gap(self) -> None:
        """Capture no longer keeps the missing chunks: go on from the first one here."""
        first = min(self.held) if self.held else (self.end.last_index + 1 if self.end is not None else None)
        if first is None or first <= self.next_index:
            return
        log.warning("frontend: chunks %d-%d never came back from capture; going on at chunk %d", self.next_index,
                    first - 1, first)
        self.next_index = first
        self.gap_since = self.asked_at = None
        self._drain()
        self._maybe_done()

    def _step(self, env: Envelope, msg: m.AudioChunk | m.ResentChunk) -> None:
        assert self.frontend is not None
        self.so_far = None
        audio = m.chunk_samples(msg, env.payload)
        frames = [f for f in self.frames if f.t_ns < msg.t_end_ns]
        self.frames = [f for f in self.frames if f.t_ns >= msg.t_end_ns]
        # Capture's onset of speech over playback reaches the chunk (its SpeechActivity came before this chunk).
        onset = self.judge.overlap_onset(msg.t_start_ns, msg.t_end_ns) if self.judge is not None else None
        chunk = Chunk(msg.index, msg.t_start_ns, msg.t_end_ns, audio, frames, msg.sample_rate,
                      playback_active=self.playback_active, user_speech_onset_ns=onset)
        t_call = time.monotonic_ns()
        recv_delay = self.io.clock.now_ns() - env.t_ns
        # One step runs models with no heartbeat meanwhile; on a loaded CPU it can take many seconds.
        with self.io.busy(self.settings.frontend_busy_s):
            if self.judge is not None:
                self.judge.hear(chunk)  # a transcript of speech over the reply runs while the frontend steps
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
        elif out.cut_playback:  # the holding phrase gives way to the answer: playback stops, nobody barged in
            self.io.interrupt("answer ready")
            self.in_turn = False
        if self.restored is not None:  # the first decision after a restart says what was rebuilt
            out.info["restored"], self.restored = self.restored, None
        decision = m.ChunkDecision(
            msg.index, out.control, out.text, out.user_text, out.turn_end, out.interrupt, len(out.delegates),
            recv_delay, compute, compute / span if span else 0.0, out.info, out.ahead)
        self.delivery.drop_stale(asked_anew(decision), out.backend_id, self.frontend.withdraw)
        self.delivery.drop_stopped(asked_to_stop(decision), out.backend_id, self.frontend.withdraw)
        if out.backend_id:  # whose answer this says (a file session waits for it)
            out.info["speaks_work"] = self.delivery.work_of(out.backend_id) or out.backend_id
        if dropped := self.delivery.take_dropped():  # the journal says which results were dropped, and why
            out.info["dropped_results"] = dropped
        self.io.publish(decision)
        # A speaking chunk without words still goes to a voice conditioned on states (the reference's TTS runs
        # for it); one that ends the turn is the speech node's own empty call (its _end_turn).
        wordless = not out.text and out.control == "speak" and out.speech is not None and not out.turn_end \
            and not out.interrupt
        if out.text or wordless:
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
                self.delivery.spoken(out.backend_id, speak_id)
        if out.turn_end or out.interrupt or out.cut_playback:
            self.in_turn = False
            self.delivery.turn_closed()
        for span_ in out.delegates:
            self.io.publish(m.DelegateRequest(self.io.new_id(), span_.instruction, span_.opened_ns, msg.index,
                                              span_.closed_by))
        self.next_index = msg.index + 1
        self._commit()
        self._maybe_done()

    def _on_played(self, ack: m.PlaybackAck) -> None:
        done = self.delivery.played(ack)
        if done is not None:
            self.io.publish(m.Delivered(self.io.new_id(), *done))

    def _maybe_done(self) -> None:
        # Done once every chunk up to capture's end marker has been stepped (after a restart, the ones
        # capture sends again come after the marker).
        if self.end is not None and not self.done and self.next_index > self.end.last_index:
            self.done = True
            self.io.publish(m.FrontendDone(self.end.last_index, self.end.t_end_ns))

    def tick(self) -> float | None:
        if self.done and self.end is not None:
            self.io.publish(m.FrontendDone(self.end.last_index, self.end.t_end_ns))  # for a restarted speech node
            return 0.5
        if self.sight_since is not None:
            self._drain()  # waiting for vision: go on without it once it is overdue
            return 0.25
        if self._missing():
            if self.gap_since is not None and time.monotonic() - self.gap_since > GAP_GIVE_UP_S:
                self._give_up_gap()
            else:
                self._drain()  # asks capture again when it is time
        return 0.25

    def stats(self) -> dict:
        rtf = self.compute_ns_total / self.audio_ns_total if self.audio_ns_total else 0.0
        return {"chunks": self.chunks, "rtf": round(rtf, 4)}

    def close(self) -> None:
        if self.judge is not None:
            self.judge.close()
        if self.frontend is not None:
            self.frontend.close()
        if self.stop:  # the session is over (a crash keeps the files for the restart)
            self.files.remove()
