"""The speech node: text in, audio out on the session timeline, each played piece acknowledged.

How it synthesizes and plays depends on the clock, and lives in
speech_pacing.py (one strategy per clock, chosen once): live sessions
synthesize on a worker thread so control (interrupts) is handled within a
block; virtual-clock sessions synthesize inline so the output is
deterministic and replayable.
"""
from __future__ import annotations

import dataclasses
import logging
import queue

import numpy as np

from edge import messages as m
from edge.language.plain_text import plain
from edge.graph.node import Node, NodeIO
from edge.nodes.speech_pacing import RealTimeSpeech, VirtualSpeech
from edge.settings import SpeechSettings
from edge.speech.base import SpeechDecoder
from edge.speech.factory import build_decoder
from edge.speech.playback import ReferenceTap
from edge.speech.player import AudioPiece, Player
from edge.speech.sinks import open_sink
from edge.wire import Envelope
from kernels.resample import resample

log = logging.getLogger(__name__)
PLAYED_KEPT = 64  # requests whose played pieces a restart remembers


def _hidden_states(msg: m.SpeakText, payload: list[bytes]) -> np.ndarray | None:
    """SpeakText's optional hidden states (float16 in payload frame 0), or None when absent or malformed."""
    if not msg.hidden_dim or not payload or not msg.token_ids:
        return None
    raw = payload[0]
    if len(raw) != 2 * msg.hidden_dim * len(msg.token_ids):
        log.warning("speech: hidden states of %d bytes do not match %d tokens x %d; speaking from text",
                    len(raw), len(msg.token_ids), msg.hidden_dim)
        return None
    return np.frombuffer(raw, np.float16).reshape(len(msg.token_ids), msg.hidden_dim).astype(np.float32)


class SpeechNode(Node):
    name = "speech"
    settings_type = SpeechSettings

    def __init__(self, io: NodeIO, settings: SpeechSettings, restore: dict) -> None:
        super().__init__(io, settings, restore)
        self.settings: SpeechSettings = settings
        self.pacing = VirtualSpeech(self) if io.clock.virtual else RealTimeSpeech(self)
        self.decoder: SpeechDecoder | None = None
        self.player: Player | None = None
        self.ready: queue.Queue[AudioPiece] = queue.Queue()
        self.end: m.FrontendDone | None = None
        self.was_active = False
        self.played_pieces = 0
        self.turn_ends: set[int] = set()  # chunks whose decision ended the turn
        self.last_speak: m.SpeakText | None = None  # the current turn's latest words (a turn-keeping voice)
        # A request is acknowledged once played (or cut), not on receipt: until then its sender keeps it, so a
        # restarted node is sent it again. What an earlier life already played is not played twice.
        self.held: dict[str, int] = {}  # speak id -> its epoch, while not yet played
        self.played: dict[str, int] = {k: int(v) for k, v in (restore.get("played") or {}).items()}

    def setup(self) -> None:
        s = self.settings
        self.decoder = build_decoder(s.voice, s.models)
        sink = open_sink(s.speaker, s.speaker_rate)
        if s.reference:
            sink = ReferenceTap(self.pacing.stage(sink), self._publish_reference)
        self.player = Player(sink)
        self.pacing.start()

    # --- synthesis ----------------------------------------------------------------------
    def _audio(self, msg: m.SpeakText, hidden: np.ndarray | None):
        """The decoder's pieces: conditioned on hidden states when they came and the decoder takes them; a
        decoder that keeps a turn's state across chunks also learns the turn and whether it ends here."""
        assert self.decoder is not None
        by_states = getattr(self.decoder, "synthesize_states", None)
        if by_states is not None and (hidden is not None or not msg.text):
            turn = {"turn": (msg.epoch, msg.utterance), "final": msg.index in self.turn_ends} \
                if getattr(self.decoder, "keeps_turns", False) else {}
            return by_states(msg.text, list(msg.token_ids), hidden, **turn)
        return self.decoder.synthesize(plain(msg.text))  # no escape or control byte reaches a voice

    def prepare(self, text: str) -> None:
        """Synthesize words drafted for a later boundary, so that saying them then costs nothing; a voice
        that cannot keep audio made ahead ignores them."""
        ahead = getattr(self.decoder, "prepare", None)
        if ahead is None:
            return
        try:
            ahead(plain(text))  # as `_audio` hands the words over when they are said: the same sentences
        except Exception as exc:  # only a head start: the words are synthesized again when said
            log.warning("speech: could not synthesize %r ahead: %s", text[:60], exc)

    def _end_turn(self, index: int, t_ns: int) -> None:
        """A turn ended without words in its last chunk: let out what a turn-keeping decoder still holds."""
        last = self.last_speak
        if last is None or last.epoch < self.io.epoch or not getattr(self.decoder, "keeps_turns", False):
            return
        self.last_speak = None
        tail = dataclasses.replace(last, id=self.io.new_id(), index=index, text="", token_ids=[], hidden_dim=0)
        self.turn_ends.add(index)
        self.pacing.speak(tail, t_ns, 0, None)

    def synthesize(self, msg: m.SpeakText, ready_ns: int | None, recv_delay_ns: int = 0,
                   hidden: np.ndarray | None = None) -> None:
        """Hand each piece over as the next one comes (streaming), the newest at the end, marked last.
        `ready_ns`: when the pieces may play (None: when each is handed over)."""
        assert self.decoder is not None and self.player is not None
        newest: np.ndarray | None = None
        seq = 0
        try:
            for audio in self._audio(msg, hidden):
                if msg.epoch < self.io.epoch:
                    return  # interrupted while synthesizing
                if newest is not None:
                    self._hand_over(msg, newest, seq, False, ready_ns, recv_delay_ns)
                    seq += 1
                newest = resample(audio, self.decoder.sample_rate, self.player.rate)
        except Exception as exc:  # a decoder failure must not take the node down
            log.error("speech: could not synthesize %r: %s", msg.text[:60], exc)
            if newest is None:
                newest = np.zeros(0, np.float32)
        if newest is not None:
            self._hand_over(msg, newest, seq, True, ready_ns, recv_delay_ns)

    def _hand_over(self, msg: m.SpeakText, samples: np.ndarray, seq: int, last: bool, ready_ns: int | None,
                   recv_delay_ns: int) -> None:
        if seq <= self.played.get(msg.id, -1):  # an earlier life of this node played it
            if last:
                self._done(msg.id)
            return
        t = self.io.clock.now_ns() if ready_ns is None else ready_ns
        self.ready.put(AudioPiece(msg.id, msg.utterance, seq, msg.epoch, samples, t, last, msg.backend_id,
                             recv_delay_ns))

    # --- messages -------------------------------------------------------------------------
    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.SpeakText):
            if msg.epoch < self.io.epoch:
                self.pacing.stale(msg)
                return
            self.last_speak = None if msg.index in self.turn_ends else msg
            self.io.hold_ack(msg.id, msg.TYPE, env.src)
            self.held[msg.id] = msg.epoch
            self.pacing.speak(msg, env.t_ns, self.io.clock.now_ns() - env.t_ns, _hidden_states(msg, env.payload))
            self.tick_soon = True  # playback starts at the block its first piece is ready, not at an idle tick
        elif isinstance(msg, m.DraftAhead):
            if env.epoch >= self.io.epoch:  # drafted before the boundary that may say them
                self.pacing.prepare(msg.text)
        elif isinstance(msg, m.ChunkDecision):
            if msg.ahead and env.epoch >= self.io.epoch:
                self.pacing.prepare(msg.ahead)
            if msg.turn_end:  # its words (sent next) end the turn; without words, the turn's tail goes now
                self.turn_ends = {i for i in self.turn_ends if i > msg.index - 64} | {msg.index}
                if not msg.text:
                    self._end_turn(msg.index, env.t_ns)
            self.pacing.decision(env.t_ns, msg)
        elif isinstance(msg, m.Duck):
            assert self.player is not None
            self.player.gain = float(min(1.0, max(0.0, msg.gain)))
            self.pacing.gain(self.player.gain, env.t_ns)
        elif isinstance(msg, m.FrontendDone) and self.end is None:
            self._end_turn(-1, env.t_ns)  # the session ends inside a turn: its tail is still spoken
            self.end = msg

    def on_interrupt(self, msg: m.Interrupt, t_ns: int) -> None:
        """The one way speech is cut, on either clock: everything older than the new epoch stops at `t_ns`."""
        assert self.player is not None
        self.drain_ready()
        cut = self.player.cut(self.io.epoch, t_ns)
        for speak_id, epoch in list(self.held.items()):
            if epoch < self.io.epoch:
                self._done(speak_id)  # cut: its work is over
        self.player.gain = 1.0
        self.pacing.gain(1.0, None)
        if cut:
            log.info("speech: interrupt cut %d piece(s) at %.3f s", len(cut), t_ns / 1e9)

    def _publish_reference(self, t_ns: int, n: int, pcm: bytes) -> None:
        self.io.publish(m.PlaybackReference(t_ns, self.player.rate if self.player else 0, n), [pcm],
                        t_ns=self.pacing.stamp(t_ns))

    def drain_ready(self) -> None:
        """Queue every synthesized piece of the current epoch for playback."""
        assert self.player is not None
        while True:
            try:
                piece = self.ready.get_nowait()
            except queue.Empty:
                return
            if piece.epoch >= self.io.epoch:
                self.player.enqueue(piece)

    def play(self, now_ns: int) -> None:
        """Play everything due up to `now_ns`; acknowledge finished pieces, announce playback turning on or off."""
        assert self.player is not None
        self.drain_ready()
        for p in self.player.advance(now_ns):
            self.played_pieces += 1
            self.io.publish(m.PlaybackAck(self.io.new_id(), p.speak_id, p.utterance, p.seq, len(p.samples),
                                          p.digest(), p.start_ns or 0, self.player.cursor_ns, p.epoch, p.last,
                                          p.backend_id, p.recv_delay_ns, p.ready_ns, p.written_ns))
            self._played(p.speak_id, p.seq, p.last)
        active = self.pacing.audible(self.player.active, self.player.pending())
        if active != self.was_active:
            self.was_active = active
            head = self.player.queue[0].utterance if self.player.queue else -1
            self.io.publish(m.PlaybackState(active, now_ns, head))

    def _played(self, speak_id: str, seq: int, last: bool) -> None:
        """Tell the supervisor what has been heard (a restart skips it), then acknowledge a request played whole."""
        self.played[speak_id] = seq
        while len(self.played) > PLAYED_KEPT:
            self.played.pop(next(iter(self.played)))
        self.io.control(m.Checkpoint(self.name, {"played": dict(self.played)}))
        if last:
            self._done(speak_id)

    def _done(self, speak_id: str) -> None:
        self.held.pop(speak_id, None)
        self.io.release_ack(speak_id)

    def tick(self) -> float | None:
        return self.pacing.tick()

    def finish(self) -> None:
        assert self.player is not None and self.end is not None
        self.player.sink.close(max(self.end.t_end_ns, self.player.cursor_ns))
        self.done = True

    def stats(self) -> dict:
        return {"played": self.played_pieces}

    def close(self) -> None:
        self.pacing.close()
        if self.player is not None and not self.done:
            self.player.sink.close(self.player.cursor_ns)
        if self.decoder is not None:
            self.decoder.close()
