"""Drafting: a reply started before the turn is known to have ended.

At a boundary where the user has paused (`_draft`), the transcript, the prefill and the reply's first piece
are made and kept as a draft. Live, capture hands over the chunk being cut in pieces (`hear_ahead`): the
VAD hears them as they come, and when the user has stopped long enough for
the transcript the boundary would read (`ASR_TAIL_NS` after the last voice),
that transcript, the prefill and the reply's first words are made there and
then, before the boundary; the boundary decides as it would have (same
audio, same prompt, greedy) and finds them ready. Any further voice drops
them, as it drops a draft made at a boundary. While a reply is being said,
its next piece is decoded before the boundary that says it, and goes to the
voice to be made ready as well.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from edge.frontend.base import Ahead, Chunk, ChunkOutput
from edge.frontend.default import grammar as protocol
from edge.frontend.default.reply import Reply
from edge.frontend.default.rules import by_rule
from edge.frontend.default.turn import Utterance, answerable
from edge.detect.asr import Heard
from edge.detect.vad import FrameProb

ASR_TAIL_NS = 150_000_000  # the silence after the last voiced frame that a turn's transcript reads
# Wall time the work at an endpoint may take (what a boundary's first words get with 1 s chunks): the user has
# stopped, so it is rarely wasted; if they go on, the loop catches up within a chunk or two.
ENDPOINT_BUDGET_S = 1.5



@dataclass
class Draft:
    """A reply started at a boundary where the user had paused, before the pause was long enough to end the
    turn: if the next boundary ends the turn on the same words, its first piece is ready at once."""

    last_voice_ns: int  # the utterance's last voiced frame then: any later voice makes the draft stale
    text: str  # the transcript it answers
    base: list[tuple[str, str]]  # the frontend's history when it was drafted
    history: list[tuple[str, str]]  # ... with that turn in it (not yet the frontend's own)
    reply: Reply
    talk: bool  # told at length (a story, an explanation, a description)
    at_ns: int | None = None  # made before a boundary, when the audio heard reached this time (the endpoint)
    cpu_ms: float = 0.0  # ... and the CPU it took there (transcript, prefill, first words)


@dataclass
class HeardAhead:
    """The chunk being cut, as far as the VAD has heard it before its boundary."""

    t_start_ns: int
    audio: np.ndarray
    frames: list[FrameProb]
    vad: tuple  # the VAD as the chunk's start found it: the chunk may not hold what was heard (capture's gates)
    tried_ns: int = -1  # the last voice an endpoint was tried for (once each)
    read: tuple[int, int, str, Heard | None] | None = None  # the transcript read there, as `Utterance.read`


class Drafting:
    """The default frontend's drafting steps (a mixin: the state is the frontend's own)."""

    def _hear(self, chunk: Chunk, out: ChunkOutput) -> tuple[list[FrameProb], tuple[int, int, str] | None]:
        """The chunk's VAD frames (those heard ahead of the boundary, and the rest), and the transcript read at
        an endpoint inside it. When the chunk does not start with what was heard ahead (a gate made it
        silence), the VAD goes back and hears the chunk itself, and what was made ahead is dropped."""
        ahead, self.ahead = self.ahead, None
        self.heard_live = ahead is not None and ahead.t_start_ns == chunk.t_start_ns
        if ahead is not None and ahead.t_start_ns == chunk.t_start_ns and len(ahead.audio) <= len(chunk.audio) \
                and np.array_equal(chunk.audio[:len(ahead.audio)], ahead.audio):
            rest = self.vad.feed(chunk.audio[len(ahead.audio):], None if len(ahead.audio) else chunk.t_start_ns)
            return ahead.frames + rest, ahead.read
        if ahead is not None:
            self.vad.restore(ahead.vad)
            out.info["ahead_unheard"] = True
            if self.draft is not None and self.draft.at_ns is not None:
                self.draft.reply.close()
                self.draft = None
        return self.vad.feed(chunk.audio, chunk.t_start_ns), None

    def hear_ahead(self, so_far: Chunk) -> Ahead | None:
        """The chunk being cut, so far (live): its VAD frames are heard now, and when the user has stopped long
        enough for the transcript the boundary would read, the turn's work is done now (see the module)."""
        ahead = self.ahead
        if ahead is not None and ahead.t_start_ns != so_far.t_start_ns:
            self.vad.restore(ahead.vad)  # heard ahead of a chunk that was never stepped
            ahead = None
        if ahead is None:
            ahead = self.ahead = HeardAhead(so_far.t_start_ns, np.zeros(0, np.float32), [], self.vad.snapshot())
        new = so_far.audio[len(ahead.audio):]
        if not len(new):
            return None
        t0 = self.step_t0 = time.perf_counter()
        cpu0 = time.process_time()
        ahead.frames += self.vad.feed(new, so_far.t_start_ns if not len(ahead.audio) else None)
        ahead.audio = np.asarray(so_far.audio, np.float32).copy()
        playing = so_far.playback_active or self.reply is not None or self.speak_until_ns > so_far.t_start_ns
        if self.reply is not None and self.utt is None:
            # Once its words are heard playing: until then their synthesis is what the user waits for.
            return self._next_piece_ahead() if so_far.playback_active else None
        utt = None if playing else self._so_far(so_far, ahead.frames)
        if utt is None or utt.over_playback or ahead.tried_ns == utt.last_voice_ns or \
                so_far.t_end_ns < utt.last_voice_ns + ASR_TAIL_NS:
            return None
        ahead.tried_ns = utt.last_voice_ns
        out = ChunkOutput(control="listen")
        out.info["audio_ms"] = self.chunk_s * 1e3
        text = self._transcribe(utt, out)  # what the boundary reads (its tail may have been too short)
        ahead.read = utt.read
        d = self.draft
        if d is not None and d.last_voice_ns == utt.last_voice_ns and d.text == text:
            return None  # drafted at the last boundary, in this same pause, on these words: the voice has them
        if d is not None:  # drafted in an earlier pause (the user went on since), or on other words
            d.reply.close()
            self.draft, self.ahead_dropped = None, True
        if not self._draft(utt, text, out, at_ns=so_far.t_end_ns):
            return None
        assert self.draft is not None
        self.draft.cpu_ms = out.info["cpu_ms"] = round((time.process_time() - cpu0) * 1e3, 1)
        out.info["endpoint_ms"] = round((so_far.t_end_ns - utt.last_voice_ns) / 1e6, 1)  # after the last voice
        out.info["ahead_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        return Ahead(out.ahead, text, utt.last_voice_ns, out.info)  # no words yet: the boundary decodes them

    def _next_piece_ahead(self) -> Ahead | None:
        """A reply is playing and nobody talks over it: its next piece is decoded now, before the boundary that
        says it, and its words go to the voice to be made ready (the first few words of a reply play while the
        rest of their sentence is decoded: the rest must not wait for that boundary to be decoded and made)."""
        r = self.reply
        if r is None or r.spoken_upto == 0 or r.finished or self.s.llm_budget is None or r.held is not None and \
                (r.held.text or r.held.instruction is not None or r.held.finished):
            return None  # not said yet, said whole, not live, or its next piece is ready
        opening = r.opening  # the rest of a first sentence cut short: it gets the first piece's share
        share = self.s.first_budget if opening else self.s.llm_budget
        piece = r.next_piece(self.s.first_tokens if opening else self.s.tokens_per_chunk, share * self.chunk_s)
        r.hold(piece)
        if not piece.text:
            return None
        return Ahead(piece.text, info={"next_piece_ms": round(piece.llm_s * 1e3, 1), "tokens": len(piece.tokens)})

    def _so_far(self, so_far: Chunk, frames: list[FrameProb]) -> Utterance | None:
        """The user's utterance as the boundary will track it, with the chunk so far in it (a copy)."""
        kept = self.utt
        self.utt = None if kept is None else dataclasses.replace(kept, audio=list(kept.audio))
        try:
            self._track(so_far, frames, playing=False)  # only called while nothing plays
            return self.utt
        finally:
            self.utt = kept

    def _draft(self, utt: Utterance, text: str, out: ChunkOutput, at_ns: int | None = None) -> bool:
        """The user paused: start the reply to `text` now (prefill, first piece) and keep it as a draft.

        Only where the turn would be answered by the model: not under a reply still being decoded (it owns
        the cache), not for fillers or "stop", not for a question a rule answers (that costs nothing).
        `at_ns`: drafted before a boundary, at the endpoint (the audio heard then reached this time).
        """
        d = self.draft
        if d is not None and d.text == text and d.last_voice_ns == utt.last_voice_ns:
            return True  # drafted at an earlier boundary of the same pause
        if d is not None:
            self._drop_draft(out)
        if self.reply is not None or not answerable(text):
            return False
        history = self._with_user(text)
        if self.s.rules and by_rule(protocol.strip_protocol(text), history) is not None:
            return False
        if self._not_caught(text, utt.heard(text)):
            return False  # the boundary asks it back: nothing to draft
        t0 = time.perf_counter()
        budget = None
        if self.s.llm_budget is not None and at_ns is not None:
            # At the endpoint the user has stopped: this is the work the boundary would do, started earlier.
            budget = ENDPOINT_BUDGET_S - (t0 - self.step_t0)
        elif self.s.llm_budget is not None:
            # Live, the draft takes what the step leaves of its share of the chunk: on a busy machine the
            # loop must not fall behind the microphone for a reply that may never be needed.
            budget = self.s.draft_budget * out.info["audio_ms"] / 1e3 - (t0 - self.step_t0)
            if budget < 0.15 * out.info["audio_ms"] / 1e3:
                return False
        history, stream, talk = self._open(history, text)
        reply = Reply(stream, first_words=self.s.llm_budget is not None)
        if budget is not None:
            budget -= stream.prefill_s
        reply.hold(reply.next_piece(self.s.first_tokens, budget))
        out.ahead = reply.held.text if reply.held is not None else ""  # the voice makes it ready meanwhile
        self.draft = Draft(utt.last_voice_ns, text, list(self.history), history, reply, talk, at_ns)
        self.warm = False
        out.info["draft_ms"] = out.info["llm_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        out.info["draft_prefill_ms"] = round(stream.prefill_s * 1e3, 1)
        out.info["draft_tokens"] = stream.prefilled + len(stream.tokens)
        return True

    def _drop_draft(self, out: ChunkOutput) -> None:
        assert self.draft is not None
        self.draft.reply.close()
        self.draft = None
        out.info["draft_dropped"] = True
