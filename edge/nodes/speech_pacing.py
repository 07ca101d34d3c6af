"""How the speech node synthesizes and plays on each clock, chosen once per node: real time, or virtual.

Real time: synthesis runs on a worker thread, so control (an interrupt)
is handled within a playback block, and the player follows the clock.
Virtual clock: synthesis runs inline, so the output is deterministic and
replayable; chunk decisions move playback on, and with echo cancellation
a chunk of audio is handed to the device ahead of time (like a device
buffer) so capture hears it during the chunk it plays in.
"""
from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING

import numpy as np

from edge import messages as m
from edge.speech.playback import StagedSink
from edge.speech.sinks import AudioSink

if TYPE_CHECKING:
    from edge.nodes.speech import SpeechNode

BLOCK_S = 0.02  # playback granularity: an interrupt stops sound within one block
IDLE_S = 0.25  # real time, nothing to play: how often the loop still looks
PICKUP_S = 0.005  # real time, synthesizing with nothing playing: the first audio starts this soon after it is made
SYNTH_BOUND_S = 60.0  # virtual clock: synthesizing one request inline, on a loaded core, takes at most this


class RealTimeSpeech:
    def __init__(self, node: "SpeechNode") -> None:
        self.node = node
        self.work: queue.Queue[tuple[m.SpeakText, int, np.ndarray | None] | str | None] = queue.Queue()
        self.busy = 0  # SpeakTexts received and not yet fully synthesized
        self.lock = threading.Lock()
        self.worker: threading.Thread | None = None

    def stage(self, sink: AudioSink) -> AudioSink:
        """The sink the player writes to: the device itself."""
        return sink

    def start(self) -> None:
        self.worker = threading.Thread(target=self._loop, name="speech-synth", daemon=True)
        self.worker.start()

    def speak(self, msg: m.SpeakText, t_ns: int, delay_ns: int, hidden: np.ndarray | None) -> None:
        with self.lock:
            self.busy += 1
        self.work.put((msg, delay_ns, hidden))

    def _loop(self) -> None:
        while True:
            item = self.work.get()
            if item is None:
                return
            if isinstance(item, str):
                if self.work.empty():  # words to say now come first; a draft behind them is stale anyway
                    self.node.prepare(item)
                continue
            msg, delay, hidden = item
            try:
                self.node.synthesize(msg, None, delay, hidden)  # pieces are ready when they are made
            finally:
                with self.lock:
                    self.busy -= 1

    def stale(self, msg: m.SpeakText) -> None:
        """A SpeakText of an older epoch arrived: nothing waits on it."""

    def prepare(self, text: str) -> None:
        """Words drafted for a later boundary: synthesized on the worker, after anything to be said now."""
        self.work.put(text)

    def decision(self, t_ns: int, msg: m.ChunkDecision) -> None:
        self.node.play(t_ns)

    def gain(self, gain: float, t_ns: int | None) -> None:
        """The player's gain changed; it applies from the next block written."""

    def stamp(self, t_ns: int) -> int | None:
        """The stamp of a reference that plays at `t_ns`: None, stamped when it leaves."""
        return None

    def audible(self, player_active: bool, queued: bool) -> bool:
        """Playback counts as on from the moment something is queued: it starts within a block."""
        return player_active or queued

    def tick(self) -> float:
        n = self.node
        assert n.player is not None
        n.play(n.io.clock.now_ns())
        if n.end is not None and not n.done:
            with self.lock:
                idle = self.busy == 0
            if idle and n.ready.empty() and not n.player.pending():
                n.finish()
        with self.lock:
            working = self.busy > 0
        if working and n.ready.empty() and not n.player.pending():
            return PICKUP_S  # the words the user waits for are being made: play them the moment they are ready
        if working or not n.ready.empty() or n.player.pending() or n.player.active or n.was_active:
            return BLOCK_S
        return IDLE_S  # nothing to play: a request wakes the loop at once (on_message sets tick_soon)

    def close(self) -> None:
        self.work.put(None)


class VirtualSpeech:
    def __init__(self, node: "SpeechNode") -> None:
        self.node = node
        self.staged: StagedSink | None = None
        self.ahead_for: tuple[int, int] | None = None  # (chunk index, t_ns): hand over once its speech is in

    def stage(self, sink: AudioSink) -> AudioSink:
        """With a reference, blocks handed over ahead wait staged until their chunk has passed."""
        self.staged = StagedSink(sink)
        return self.staged

    def start(self) -> None:
        pass

    def speak(self, msg: m.SpeakText, t_ns: int, delay_ns: int, hidden: np.ndarray | None) -> None:
        with self.node.io.busy(SYNTH_BOUND_S):
            self.node.synthesize(msg, t_ns, delay_ns, hidden)  # ready at the request's own stamp
        self.node.drain_ready()
        self._ahead_if(msg.index)

    def stale(self, msg: m.SpeakText) -> None:
        self._ahead_if(msg.index)  # the decision waited for these words; they will not come

    def prepare(self, text: str) -> None:
        """Nothing: the voice's noise is seeded once, so audio made ahead would change every later sentence's
        sound, and a replay would not play the same (on this clock, synthesis costs no session time)."""

    def decision(self, t_ns: int, msg: m.ChunkDecision) -> None:
        self.node.play(t_ns)
        if self.staged is not None:
            self.staged.commit(t_ns)
            if msg.text:  # its words follow this decision: hand over once they are synthesized
                self.ahead_for = (msg.index, t_ns)
            else:
                self._hand_over_ahead(t_ns)

    def _ahead_if(self, index: int) -> None:
        if self.ahead_for is not None and self.ahead_for[0] == index:
            self._hand_over_ahead(self.ahead_for[1])

    def _hand_over_ahead(self, t_ns: int) -> None:
        """Give the device the next chunk's audio now and publish it as the reference."""
        n = self.node
        assert n.player is not None
        self.ahead_for = None
        chunk_ns = n.settings.chunk_ns
        n.play(t_ns + chunk_ns)
        # Silence counts too: capture waits until the reference covers the chunk it is about to cut.
        n.io.publish(m.PlaybackReference(t_ns + chunk_ns, n.player.rate, 0), t_ns=t_ns)

    def gain(self, gain: float, t_ns: int | None) -> None:
        """What is staged is re-scaled from `t_ns` on (None: from the next block handed over)."""
        if self.staged is not None:
            if t_ns is not None:
                self.staged.duck(t_ns, gain)
            self.staged.gain = gain

    def stamp(self, t_ns: int) -> int | None:
        """The stamp of a reference that plays at `t_ns`: no later than the session clock."""
        return min(t_ns, self.node.io.clock.now_ns())

    def audible(self, player_active: bool, queued: bool) -> bool:
        """Only sound already playing counts: what is queued waits for the next decision's stamp."""
        return player_active

    def tick(self) -> float:
        n = self.node
        assert n.player is not None
        if n.end is not None and not n.done:
            n.play(n.player.end_ns() + 1)  # nothing more will come: play out the rest
            n.finish()
        return 0.05

    def close(self) -> None:
        pass
