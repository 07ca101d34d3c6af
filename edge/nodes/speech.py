"""The speech node: text in, audio out on the session timeline, each played piece acknowledged.

Live sessions synthesize on a worker thread so control (interrupts) is
handled within a block; virtual-clock sessions synthesize inline so the
output is deterministic and replayable.
"""
from __future__ import annotations

import dataclasses
import logging
import queue
import threading

import numpy as np

from edge import messages as m
from edge.clock import VirtualClock
from edge.speech.playback import ReferenceTap, StagedSink
from edge.settings import duplex_settings
from edge.graph.node import Node, NodeIO
from edge.speech.base import SpeechDecoder
from edge.speech.factory import build_decoder
from edge.speech.player import Piece, Player
from edge.speech.sinks import open_sink
from edge.wire import Envelope
from kernels.resample import resample

log = logging.getLogger("edge.speech")
BLOCK_S = 0.02  # playback granularity: an interrupt stops sound within one block


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
    subscribes = ("dlg.speak", "dlg.duck", "dlg.decision", "dlg.done")

    def __init__(self, io: NodeIO, config: dict, restore: dict) -> None:
        super().__init__(io, config, restore)
        self.virtual = isinstance(io.clock, VirtualClock)
        self.decoder: SpeechDecoder | None = None
        self.player: Player | None = None
        self.ready: queue.Queue[Piece] = queue.Queue()
        self.work: queue.Queue[tuple[m.SpeakText, int, np.ndarray | None] | None] = queue.Queue()
        self.busy = 0  # SpeakTexts received and not yet fully synthesized
        self.busy_lock = threading.Lock()
        self.end: m.FrontendDone | None = None
        self.was_active = False
        self.played_pieces = 0
        self.echo_ref = bool(config.get("echo_reference", False))
        # On the virtual clock with a reference, a chunk of audio is handed over ahead (like a device buffer)
        # so capture can hear it during the chunk it plays in; it waits staged until the chunk has passed.
        self.chunk_ns = int(config.get("chunk_ms", 1000)) * 1_000_000
        self.staged: StagedSink | None = None
        self._ahead_for: tuple[int, int] | None = None  # (chunk index, t_ns): hand over once its speech is in
        self._worker: threading.Thread | None = None
        self.turn_ends: set[int] = set()  # chunks whose decision ended the turn
        self.last_speak: m.SpeakText | None = None

    def setup(self) -> None:
        self.decoder = build_decoder(self.config.get("voice", "espeak"), self.config)
        sink = open_sink(self.config.get("speaker"), int(self.config.get("speaker_rate", 24000)))
        self.echo_ref = self.echo_ref or duplex_settings(self.config).reference
        if self.echo_ref:
            if self.virtual:
                sink = self.staged = StagedSink(sink)
            sink = ReferenceTap(sink, self._publish_reference)
        self.player = Player(sink)
        if not self.virtual:
            self._worker = threading.Thread(target=self._synth_loop, name="speech-synth", daemon=True)
            self._worker.start()

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
        return self.decoder.synthesize(msg.text)

    def _end_turn(self, index: int, t_ns: int) -> None:
        """A turn ended without words in its last chunk: let out what a turn-keeping decoder still holds."""
        last = self.last_speak
        if last is None or last.epoch < self.io.epoch or not getattr(self.decoder, "keeps_turns", False):
            return
        self.last_speak = None
        tail = dataclasses.replace(last, id=self.io.new_id(), index=index, text="", token_ids=[], hidden_dim=0)
        self.turn_ends.add(index)
        if self.virtual:
            self._synthesize(tail, t_ns)
            self._drain_ready()
        else:
            with self.busy_lock:
                self.busy += 1
            self.work.put((tail, 0, None))

    def _synthesize(self, msg: m.SpeakText, ready_ns: int | None, recv_delay_ns: int = 0,
                    hidden: np.ndarray | None = None) -> None:
        assert self.decoder is not None and self.player is not None
        pieces = []
        try:
            for audio in self._audio(msg, hidden):
                if msg.epoch < self.io.epoch:
                    return  # interrupted while synthesizing
                pieces.append(resample(audio, self.decoder.sample_rate, self.player.rate))
                if not self.virtual and len(pieces) > 1:  # stream: hand over all but the newest
                    self._hand_over(msg, pieces[-2], len(pieces) - 2, False, ready_ns, recv_delay_ns)
        except Exception as exc:  # a decoder failure must not take the node down
            log.error("speech: could not synthesize %r: %s", msg.text[:60], exc)
            pieces = pieces or [np.zeros(0, np.float32)]
        if self.virtual:
            for i, p in enumerate(pieces):
                self._hand_over(msg, p, i, i == len(pieces) - 1, ready_ns, recv_delay_ns)
        elif pieces:
            self._hand_over(msg, pieces[-1], len(pieces) - 1, True, ready_ns, recv_delay_ns)

    def _hand_over(self, msg: m.SpeakText, samples: np.ndarray, seq: int, last: bool, ready_ns: int | None,
                   recv_delay_ns: int) -> None:
        t = self.io.clock.now_ns() if ready_ns is None else ready_ns
        self.ready.put(Piece(msg.id, msg.utterance, seq, msg.epoch, samples, t, last, msg.backend_id,
                             recv_delay_ns))

    def _synth_loop(self) -> None:
        while True:
            item = self.work.get()
            if item is None:
                return
            msg, delay, hidden = item
            try:
                self._synthesize(msg, None, delay, hidden)
            finally:
                with self.busy_lock:
                    self.busy -= 1

    # --- messages -------------------------------------------------------------------------
    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.SpeakText):
            if msg.epoch < self.io.epoch:
                if self._ahead_for is not None and self._ahead_for[0] == msg.index:
                    self._hand_over_ahead(self._ahead_for[1])
                return
            delay = self.io.clock.now_ns() - env.t_ns
            hidden = _hidden_states(msg, env.payload)
            self.last_speak = None if msg.index in self.turn_ends else msg
            if self.virtual:
                self._synthesize(msg, env.t_ns, delay, hidden)
                self._drain_ready()
                if self._ahead_for is not None and self._ahead_for[0] == msg.index:
                    self._hand_over_ahead(self._ahead_for[1])
            else:
                with self.busy_lock:
                    self.busy += 1
                self.work.put((msg, delay, hidden))
        elif isinstance(msg, m.ChunkDecision):
            if msg.interrupt and env.epoch > self.io.epoch:  # the frontend bumped its epoch before sending
                self.io.epoch = env.epoch
                self._cut(env.t_ns)
            if msg.turn_end:  # its words (sent next) end the turn; without words, the turn's tail goes now
                self.turn_ends = {i for i in self.turn_ends if i > msg.index - 64} | {msg.index}
                if not msg.text:
                    self._end_turn(msg.index, env.t_ns)
            self._play(env.t_ns)
            if self.staged is not None:
                self.staged.commit(env.t_ns)
                if msg.text:  # its words follow this decision: hand over once they are synthesized
                    self._ahead_for = (msg.index, env.t_ns)
                else:
                    self._hand_over_ahead(env.t_ns)
        elif isinstance(msg, m.Duck):
            assert self.player is not None
            self.player.gain = float(min(1.0, max(0.0, msg.gain)))
            if self.staged is not None:
                self.staged.duck(env.t_ns, self.player.gain)
                self.staged.gain = self.player.gain
        elif isinstance(msg, m.FrontendDone) and self.end is None:
            self._end_turn(-1, env.t_ns)  # the session ends inside a turn: its tail is still spoken
            self.end = msg

    def on_interrupt(self, epoch: int, msg: m.Interrupt) -> None:
        if not self.virtual:  # virtual sessions cut on the chunk decision, at its own timestamp
            self._cut(self.io.clock.now_ns())

    def _hand_over_ahead(self, t_ns: int) -> None:
        """Virtual clock: give the device the next chunk's audio now and publish it as the reference."""
        assert self.player is not None
        self._ahead_for = None
        self._play(t_ns + self.chunk_ns)
        # Silence counts too: capture waits until the reference covers the chunk it is about to cut.
        self.io.publish(m.PlaybackReference(t_ns + self.chunk_ns, self.player.rate, 0), t_ns=t_ns)

    def _publish_reference(self, t_ns: int, n: int, pcm: bytes) -> None:
        stamp = min(t_ns, self.io.clock.now_ns()) if self.virtual else None
        self.io.publish(m.PlaybackReference(t_ns, self.player.rate if self.player else 0, n), [pcm], t_ns=stamp)

    def _cut(self, t_ns: int) -> None:
        assert self.player is not None
        self._drain_ready()
        cut = self.player.cut(self.io.epoch, t_ns)
        self.player.gain = 1.0
        if self.staged is not None:
            self.staged.gain = 1.0
        if cut:
            log.info("speech: interrupt cut %d piece(s) at %.3f s", len(cut), t_ns / 1e9)

    def _drain_ready(self) -> None:
        assert self.player is not None
        while True:
            try:
                piece = self.ready.get_nowait()
            except queue.Empty:
                return
            if piece.epoch >= self.io.epoch:
                self.player.enqueue(piece)

    def _play(self, now_ns: int) -> None:
        assert self.player is not None
        self._drain_ready()
        for p in self.player.advance(now_ns):
            self.played_pieces += 1
            self.io.publish(m.PlaybackAck(self.io.new_id(), p.speak_id, p.utterance, p.seq, len(p.samples),
                                          p.digest(), p.start_ns or 0, self.player.cursor_ns, p.epoch, p.last,
                                          p.backend_id, p.recv_delay_ns))
        active = self.player.active or (self.player.pending() and not self.virtual)
        if active != self.was_active:
            self.was_active = active
            head = self.player.queue[0].utterance if self.player.queue else -1
            self.io.publish(m.PlaybackState(active, now_ns, head))

    def tick(self) -> float | None:
        assert self.player is not None
        if self.virtual:
            if self.end is not None and not self.done:
                self._play(self.player.end_ns() + 1)  # nothing more will come: play out the rest
                self._finish()
            return 0.05
        self._play(self.io.clock.now_ns())
        if self.end is not None and not self.done:
            with self.busy_lock:
                idle = self.busy == 0
            if idle and self.ready.empty() and not self.player.pending():
                self._finish()
        return BLOCK_S

    def _finish(self) -> None:
        assert self.player is not None and self.end is not None
        self.player.sink.close(max(self.end.t_end_ns, self.player.cursor_ns))
        self.done = True

    def stats(self) -> dict:
        return {"played": self.played_pieces}

    def close(self) -> None:
        self.work.put(None)
        if self.player is not None and not self.done:
            self.player.sink.close(self.player.cursor_ns)
        if self.decoder is not None:
            self.decoder.close()


