"""The embedded default frontend: Silero VAD, whisper base and Qwen2.5 0.5B behind `step(chunk)`.

Per chunk: VAD marks the user's speech. When an utterance has been
followed by enough silence (`endpoint_ms`, checked at the chunk boundary)
it is transcribed and the LLM starts a reply under the protocol grammar;
the reply goes out a sentence per chunk, the first one as soon as it is
whole. Speech over the assistant's reply is heard here (its own VAD and
transcript) and decided at the chunk boundary by the barge-in judge it is
handed (edge/bargein): a backchannel lets the reply go on, an interruption
drops it. Harness results are spoken at an idle listen boundary, or in place
of the holding phrase that followed their delegate span when they are back
while it still plays (at a boundary, from what has been delivered by then).
A restarted frontend gets its chat history back (`resume`) and prefills it again.

Live, capture hands over the chunk being cut in pieces (`hear_ahead`): the
VAD hears them as they come, and when the user has stopped long enough for
the transcript the boundary would read (`ASR_TAIL_NS` after the last voice),
that transcript, the prefill and the reply's first words are made there and
then, before the boundary; the boundary decides as it would have (same
audio, same prompt, greedy) and finds them ready. Any further voice drops
them, as it drops a draft made at a boundary.
"""
from __future__ import annotations

import collections
import dataclasses
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edge.audio_format import RATE
from edge.bargein import words as barge_in
from edge.bargein.policy import by_words
from edge.frontend.base import Ahead, Chunk, ChunkOutput, DelegateSpan, Frontend, Overlap, OverlapJudge, ResultToSay
from edge.frontend.default import grammar as protocol
from edge.detect import number_reading
from edge.detect.asr import Transcriber
from edge.frontend.default.llm import DecisionModel
from edge.backends.locate import QWEN_GGUF, assemble
from edge.frontend.default.reply import FixedStream, Reply
from edge.frontend.default.rules import at_length, by_rule
from edge.memory.describe import fields as scene_fields
from edge.detect.vad import FRAME_NS, FrameProb, SileroVad

log = logging.getLogger("edge.frontend.default")
HISTORY_CHARS = 320  # of one reply, in the history the model sees
CHARS_PER_S = 14.0  # the voice's speaking rate: estimates when a reply stops playing
VOICING_WAIT_S = 2.0  # live: how long the warm-up waits for first words sent to the voice to be heard playing
ASR_TAIL_NS = 150_000_000  # the silence after the last voiced frame that a turn's transcript reads
# Wall time the work at an endpoint may take (what a boundary's first words get with 1 s chunks): the user has
# stopped, so it is rarely wasted; if they go on, the loop catches up within a chunk or two.
ENDPOINT_BUDGET_S = 1.5


def answerable(text: str) -> bool:
    """Whether a turn heard as `text` gets a reply: not nothing, not only "stop, wait", not only "mm-hm"."""
    heard = barge_in.words(text)
    return bool(heard) and not barge_in.only_stop(heard) and not barge_in.only_filler(heard)


def is_progress(result: ResultToSay) -> bool:
    """A progress notice ("I'm still checking on that."): the harness releases them as `<work id>:p`."""
    return result.id.endswith(":p")


@dataclass
class Settings:
    threads: int = 1
    endpoint_ms: int = 300  # silence after speech that ends the user's turn (checked at the boundary)
    question_endpoint_ms: int = 96  # ... or this much, when the words so far end in a question mark
    draft_ms: int = 32  # a pause this long at a boundary: the reply is drafted, in case the turn has ended
    draft_budget: float = 0.9  # share of a chunk a drafting step may take in all (live); the step that ends the
    # turn on the draft costs next to nothing, so it catches up
    threshold: float = 0.5  # VAD speech probability
    preroll_ms: int = 200  # audio kept before the first voiced frame
    max_turn_s: int = 25  # whisper reads 30 s at most
    delegate_bias: float = 0.4  # logit added to "<" (span or listen) at a reply's first token
    max_reply_tokens: int = 80
    max_talk_tokens: int = 320  # a story, an explanation or a description, told at length (rules.at_length)
    tokens_per_chunk: int = 20  # decode cap within one chunk (the reference caps text tokens per chunk at 20)
    first_tokens: int = 32  # the same for the reply's first piece (a delegate span comes before it)
    history_turns: int = 8  # turns of conversation in the prompt before it is trimmed ...
    keep_turns: int = 2  # ... to this many
    llm_budget: float | None = 0.6  # share of a chunk the LLM may decode in one step (live); None: no limit
    first_budget: float = 1.5  # the same for the reply's first piece
    # The user's turns are read by whisper base with beam 5: `venus-edge bench asr` measured WER 30.6 % against
    # tiny.en's 48.3 % (names 27 % against 58 %) for about 2.1 times the recognition compute (README).
    asr: str = "base"
    asr_beam: int = 5
    number_reading: bool = True  # a sum heard with a broken operand is read again, minded of numbers
    # (edge/detect/number_reading.py; the journal's `asr_reread` says what was read and why)
    rules: bool = True  # sums, conversions and the clock go to the harness, "what did I just say" is answered
    # from the history (edge/frontend/default/rules.py): the 0.5B model gets them wrong


@dataclass
class Utterance:
    onset_ns: int
    last_voice_ns: int
    audio_start_ns: int
    audio: list[np.ndarray] = field(default_factory=list)
    voiced_frames: int = 0
    over_playback: bool = False  # started while the assistant was speaking
    read: tuple[int, int, str] | None = None  # the newest transcript: (last voice then, its audio's end, text)

    def samples(self, end_ns: int | None = None) -> np.ndarray:
        a = np.concatenate(self.audio) if self.audio else np.zeros(0, np.float32)
        if end_ns is not None:
            a = a[:max(0, (end_ns - self.audio_start_ns) * RATE // 1_000_000_000)]
        return a


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
    read: tuple[int, int, str] | None = None  # the transcript read there, as `Utterance.read`


class DefaultFrontend(Frontend):
    name = "default"

    def __init__(self, vad: SileroVad, asr: Transcriber, llm: DecisionModel, settings: Settings) -> None:
        self.vad, self.asr, self.llm, self.s = vad, asr, llm, settings
        self.utt: Utterance | None = None
        self.prev_audio = np.zeros(0, np.float32)
        self.reply: Reply | None = None
        self.reply_turn_end_ns = 0
        self.speak_until_ns = 0
        self.spoken_words: collections.deque[str] = collections.deque(maxlen=80)
        self.history: list[tuple[str, str]] = []
        self.results: collections.deque[ResultToSay] = collections.deque()
        self.seen_results: set[str] = set()
        # The last reply delegated, and what it said since is only the holding phrase: an answer back now
        # replaces it (the user waits for the answer, not for the rest of "One moment, I'll look that up.").
        # Held as the count of results delivered when the span went out: only later ones can answer it.
        self.delivered = 0
        self.holding_at: int | None = None
        self.arrival: dict[str, int] = {}  # result id -> its place in the order of delivery
        # What speech over the reply means: the transcript rule alone until the barge-in judge is handed in.
        self.overlap_judge: OverlapJudge = by_words
        # The first token decides between speaking and a span: a small prior towards the span, like the
        # reference's listen-probability scale (a 0.5B model under-delegates questions about the present).
        self.delegate_bias = {self.llm.tokenize(protocol.OPEN)[0]: settings.delegate_bias}
        self.warm = False  # the KV cache already holds the prompt up to the next user turn
        self.scene: tuple[int, str] | None = None  # the vision node's newest description: (frame time, text)
        self.draft: Draft | None = None  # holds the LLM's cache: dropped before anything else uses the model
        self.step_t0 = 0.0  # when the current step began
        self.voiced_at: float | None = None  # live: when words went to the voice with nothing playing, until heard
        self.ahead: HeardAhead | None = None  # live: the chunk being cut, heard before its boundary
        self.ahead_dropped = False  # a draft dropped before the boundary (more voice came): journaled there
        self.chunk_s = 1.0  # the chunks' length, from the last one stepped
        self._warm_up()

    # --- the chunk loop --------------------------------------------------------------------
    def step(self, chunk: Chunk) -> ChunkOutput:
        out = ChunkOutput(control="listen")
        cpu0 = time.process_time()  # CPU spent, apart from the wall time a busy machine adds
        t0 = self.step_t0 = time.perf_counter()
        self.chunk_s = (chunk.t_end_ns - chunk.t_start_ns) / 1e9
        frames, early = self._hear(chunk, out)
        out.info["vad_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
        out.info["audio_ms"] = (chunk.t_end_ns - chunk.t_start_ns) / 1e6
        playing = chunk.playback_active or self.reply is not None or self.speak_until_ns > chunk.t_start_ns
        self._track(chunk, frames, playing)
        last_ns = frames[-1].t_start_ns + FRAME_NS if frames else chunk.t_end_ns
        utt = self.utt
        if early is not None and utt is not None and utt.last_voice_ns == early[0]:
            utt.read = early  # read at the endpoint, before this boundary: no more voice came since
        if self.ahead_dropped:
            self.ahead_dropped = False
            out.info["draft_dropped"] = True
        if self.draft is not None and (utt is None or utt.last_voice_ns != self.draft.last_voice_ns):
            self._drop_draft(out)  # the user went on talking: the words it answers are not the turn's
        if utt is not None:
            silence_ns = last_ns - utt.last_voice_ns
            # A turn also ends when it runs too long (noise the VAD takes for speech must not hold the floor).
            ended = silence_ns >= self.s.endpoint_ms * 1_000_000 or \
                chunk.t_end_ns - utt.onset_ns >= self.s.max_turn_s * 1_000_000_000
            if utt.over_playback and playing:
                self._overlap(chunk, utt, ended, out)
            elif ended:
                self.utt = None
                self._answer(chunk, utt, out)
            elif silence_ns >= self.s.question_endpoint_ms * 1_000_000:
                # A short pause after a finished question ends the turn too: waiting for the full
                # endpoint here would cost a whole chunk.
                text = self._transcribe(utt, out)
                if text.rstrip().endswith("?"):
                    self.utt = None
                    self._answer(chunk, utt, out, text)
                elif not self._draft(utt, text, out):
                    self._prefill_partial(text, out)
            elif not utt.over_playback and silence_ns >= self.s.draft_ms * 1_000_000:
                # A pause too short to end the turn yet: if the next boundary ends it, the reply is ready then.
                text = self._transcribe(utt, out)
                if not self._draft(utt, text, out):
                    self._prefill_partial(text, out)
            elif not utt.over_playback and utt.voiced_frames * FRAME_NS >= 500_000_000:
                self._prefill_partial(self._transcribe(utt, out), out)
        answer = self._answer_to_holding() if self.utt is None and not out.interrupt else None
        if answer is not None:
            self._stop_holding(chunk, out, playing)
            self._speak_result(out, chunk.t_end_ns, answer)
        elif self.reply is not None and not out.interrupt:
            self._continue(chunk, out)
        elif self.utt is None and self.reply is None and not playing and self.results:
            self._speak_result(out, chunk.t_end_ns)
        elif self.utt is None and self.reply is None and not self.warm and not self._voicing(chunk):
            t1 = time.perf_counter()
            self._warm_up()
            out.info["warm_ms"] = round((time.perf_counter() - t1) * 1e3, 1)
        if out.text and not chunk.playback_active and self.voiced_at is None:
            self.voiced_at = time.perf_counter()  # the user waits for these: see _voicing
        self.prev_audio = chunk.audio[-self.s.preroll_ms * RATE // 1000:]
        out.info["cpu_ms"] = round((time.process_time() - cpu0) * 1e3, 1)
        return out

    def _hear(self, chunk: Chunk, out: ChunkOutput) -> tuple[list[FrameProb], tuple[int, int, str] | None]:
        """The chunk's VAD frames (those heard ahead of the boundary, and the rest), and the transcript read at
        an endpoint inside it. When the chunk does not start with what was heard ahead (a gate made it
        silence), the VAD goes back and hears the chunk itself, and what was made ahead is dropped."""
        ahead, self.ahead = self.ahead, None
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

    def _so_far(self, so_far: Chunk, frames: list[FrameProb]) -> Utterance | None:
        """The user's utterance as the boundary will track it, with the chunk so far in it (a copy)."""
        kept = self.utt
        self.utt = None if kept is None else dataclasses.replace(kept, audio=list(kept.audio))
        try:
            self._track(so_far, frames, playing=False)  # only called while nothing plays
            return self.utt
        finally:
            self.utt = kept

    def _track(self, chunk: Chunk, frames: list, playing: bool) -> None:
        voiced = [f for f in frames if f.prob >= self.s.threshold]
        if self.utt is None and voiced:
            onset = voiced[0].t_start_ns
            start = chunk.t_start_ns - len(self.prev_audio) * 1_000_000_000 // RATE
            self.utt = Utterance(onset, onset, start, [self.prev_audio], over_playback=playing)
        if self.utt is not None:
            self.utt.audio.append(chunk.audio)
            if voiced:
                self.utt.last_voice_ns = voiced[-1].t_start_ns + FRAME_NS
                self.utt.voiced_frames += len(voiced)

    def _overlap(self, chunk: Chunk, utt: Utterance, ended: bool, out: ChunkOutput) -> None:
        t0 = time.perf_counter()
        text = self.asr.transcribe(utt.samples())
        asr_ms = (time.perf_counter() - t0) * 1e3
        voiced_ms = utt.voiced_frames * FRAME_NS / 1e6
        verdict = self.overlap_judge(Overlap(text, utt.samples(), voiced_ms, not ended, set(self.spoken_words),
                                             self.asr.likelihood))
        out.info["barge_in"] = {"decision": verdict.decision, "text": text, "onset_ns": utt.onset_ns,
                                "decided_ns": chunk.t_end_ns, "after_onset_ms": (chunk.t_end_ns - utt.onset_ns) / 1e6,
                                "voiced_ms": voiced_ms, "asr_ms": round(asr_ms, 1)}
        out.user_text = text
        if verdict.decision in barge_in.GO_ON:
            self.utt = None  # go on: the reply continues
        elif verdict.decision == "interrupt":
            out.interrupt = True
            self.yield_turn()
            self.speak_until_ns = chunk.t_end_ns
            utt.over_playback = False  # from now on it is the user's turn
            if ended:
                self.utt = None
                self._answer(chunk, utt, out, text)

    def _answer(self, chunk: Chunk, utt: Utterance, out: ChunkOutput, text: str | None = None) -> None:
        """The user's turn ended: transcribe it and start the reply."""
        if text is None:
            text = self._transcribe(utt, out)
        out.user_text = text
        out.info["user_end_ns"] = utt.last_voice_ns
        draft, self.draft = self.draft, None
        if draft is not None and (draft.text != text or draft.base != self.history or self.reply is not None):
            draft.reply.close()  # drafted on other words, or the conversation moved on since
            draft = None
        if not answerable(text):
            return  # nothing said, only "stop, wait", or only "mm-hm": keep listening
        if self.reply is not None:  # a new question replaces an unfinished answer
            self._remember_reply()
            self.reply.close()
        # "I'm still checking on that." is about an earlier question: once a new one is asked it is not said.
        self.results = collections.deque(r for r in self.results if not is_progress(r))
        self.reply_turn_end_ns = utt.last_voice_ns
        self.holding_at = None
        if draft is not None:  # drafted at the last boundary on these very words: its first piece is ready
            self.history, self.reply = draft.history, draft.reply
            out.info["drafted"] = True
            if draft.at_ns is not None:  # at the endpoint: how long after the voice, how long before this boundary
                out.info["drafted_ahead"] = {"t_ns": draft.at_ns, "cpu_ms": draft.cpu_ms,
                                             "after_voice_ms": round((draft.at_ns - draft.last_voice_ns) / 1e6, 1),
                                             "before_boundary_ms": round((chunk.t_end_ns - draft.at_ns) / 1e6, 1)}
            if draft.talk:
                out.info["at_length"] = True
            return
        self.history = self._with_user(text)
        ruled = by_rule(protocol.strip_protocol(text), self.history) if self.s.rules else None
        if ruled is not None:
            self.reply = Reply(FixedStream(ruled))
            out.info["by_rule"] = True
            return
        self.history, stream, talk = self._open(self.history, text)
        if talk:
            out.info["at_length"] = True
        out.info["prefill_ms"] = round(stream.prefill_s * 1e3, 1)
        out.info["prefill_tokens"] = stream.prefilled
        self.reply = Reply(stream)

    def _with_user(self, text: str) -> list[tuple[str, str]]:
        """The history with the user's new turn added (and trimmed when it has grown long)."""
        history = [*self.history, ("user", self._camera_line() + protocol.strip_protocol(text))]
        if len(history) > 2 * self.s.history_turns:
            # Trim in one go, not a turn at a time: each trim changes the prompt's start, so the whole
            # history must be prefilled again; doing it rarely keeps turns cheap.
            history = history[-2 * self.s.keep_turns - 1:]
        return history

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
        reply = Reply(stream)
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

    def _open(self, history: list[tuple[str, str]], text: str) -> tuple[list[tuple[str, str]], Any, bool]:
        """Start decoding the reply to `text` (the last turn of `history`): the history as it fits the context,
        the token stream, and whether it is told at length (a story, an explanation, a description)."""
        said = protocol.strip_protocol(text)
        talk = self.s.rules and at_length(said)
        cap = self.s.max_talk_tokens if talk else self.s.max_reply_tokens
        history, tokens = self._prompt_within(history, cap)
        first = protocol.talk_opening(self.llm.tokenize) if talk else self.delegate_bias
        banned = (protocol.talk_words if talk else protocol.banned_words)(self.llm.tokenize, said)
        stream = self.llm.stream(tokens, protocol.TALK_GRAMMAR if talk else protocol.GRAMMAR, cap, first, banned)
        return history, stream, talk

    def _prompt_within(self, history: list[tuple[str, str]], reply_tokens: int) -> tuple[list[tuple[str, str]], list[int]]:
        """The history and its prompt's tokens, the oldest turns dropped while it and the reply would not fit."""
        n_ctx = self.llm.llm.n_ctx()
        tokens = self.llm.tokenize(protocol.chat_prompt(history))
        while len(tokens) + reply_tokens > n_ctx and len(history) > 1:
            history = history[2:] if len(history) > 2 else history[-1:]
            tokens = self.llm.tokenize(protocol.chat_prompt(history))
        return history, tokens

    def see(self, t_ns: int, description: str) -> None:
        self.scene = (t_ns, description)

    def _camera_line(self) -> str:
        """What the camera shows now, before the user's words: the model cannot see, so it is told in words.

        The newest description's text read, and how many faces are in view when faces are counted (the
        user's own is usually one of them: "is anyone behind me?" is answered from the count).
        """
        if self.scene is None:
            return ""
        seen = scene_fields(self.scene[1])
        words = protocol.strip_protocol(seen.get("text", ""))
        line = f"(The camera shows a sign or page that reads: {words}.)\n" if words else ""
        if seen.get("faces", "").isdigit():
            n = int(seen["faces"])
            others = n - 1  # a camera facing the user sees the user's own face first
            who = ("no face" if n == 0 else "only the user's face, so no one else is there" if n == 1 else
                   f"{n} faces, so {'someone else is' if others == 1 else f'{others} other people are'} there "
                   "with the user")
            line += f"(The camera sees {who}.)\n"
        return line

    def _transcribe(self, utt: Utterance, out: ChunkOutput) -> str:
        # A pass made while the turn went on (for the prefill) already read every word when no voice came
        # since and it had the short tail a question is ended on: the endpoint then costs no recognition.
        if utt.read is not None and utt.read[0] == utt.last_voice_ns and \
                utt.read[1] >= utt.last_voice_ns + self.s.question_endpoint_ms * 1_000_000:
            out.info["asr_reused"] = True
            return utt.read[2]
        audio = utt.samples(utt.last_voice_ns + 150_000_000)
        t0 = time.perf_counter()
        text = self.asr.transcribe(audio)
        out.info["asr_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        out.info["asr_audio_ms"] = round(len(audio) / RATE * 1e3, 1)
        if self.s.number_reading:
            t1 = time.perf_counter()
            again = number_reading.reread(self.asr, text)
            if again is not None:
                out.info["asr_reread"] = again.journal() | {"ms": round((time.perf_counter() - t1) * 1e3, 1)}
                text = again.text
        utt.read = (utt.last_voice_ns, utt.audio_start_ns + len(audio) * 1_000_000_000 // RATE, text)
        return text

    def _continue(self, chunk: Chunk, out: ChunkOutput) -> None:
        assert self.reply is not None
        budget = None
        if self.s.llm_budget is not None:
            # The first words are what the user waits for: they may overrun the chunk (one late step is
            # caught up by the quick listening steps after it); later pieces keep to the budget.
            share = self.s.first_budget if self.reply.spoken_upto == 0 else self.s.llm_budget
            budget = share * (chunk.t_end_ns - chunk.t_start_ns) / 1e9
        cap = self.s.first_tokens if self.reply.spoken_upto == 0 else self.s.tokens_per_chunk
        piece = self.reply.next_piece(cap, budget)
        out.info["llm_ms"] = round(piece.llm_s * 1e3, 1) + out.info.get("prefill_ms", 0.0)
        out.info["llm_tokens"] = len(piece.tokens)
        out.tokens = piece.tokens
        if piece.instruction:
            out.delegates.append(DelegateSpan(piece.instruction, self.reply_turn_end_ns, piece.closed_by))
            self.holding_at = self.delivered
        if piece.text:
            out.control, out.text = "speak", piece.text
            self.spoken_words.extend(barge_in.words(piece.text))
            self.speak_until_ns = max(self.speak_until_ns, chunk.t_end_ns) + int(len(piece.text) / CHARS_PER_S * 1e9)
        if piece.finished:
            out.turn_end = True
            self._remember_reply()
            self.reply = None

    def _prefill_partial(self, text: str, out: ChunkOutput) -> None:
        """The user is still talking: prefill the words heard so far, so the final prompt shares that prefix.

        The last word may still change (it may be cut mid-word), so it is left out.
        """
        words = protocol.strip_protocol(text).split()[:-1]
        if not words or self.reply is not None:  # never touch the cache under a reply being decoded
            return
        t0 = time.perf_counter()
        stem = protocol.chat_prompt(self.history).rsplit("<|im_start|>", 1)[0]
        self.llm.prefill(self.llm.tokenize(f"{stem}<|im_start|>user\n{self._camera_line()}{' '.join(words)}"))
        self.warm = False  # the cache now ends inside a user turn
        out.info["partial_prefill_ms"] = round((time.perf_counter() - t0) * 1e3, 1)

    def _voicing(self, chunk: Chunk) -> bool:
        """Live, words went to the voice and are not heard playing yet: their synthesis is what the user waits
        for, and a prefill now would take the CPU from it. The warm-up waits for a later boundary (it only has
        to be done before the user's next turn ends). Judged by the wall clock: a loop behind the microphone
        steps chunks older than the words."""
        if self.s.llm_budget is None or self.voiced_at is None:
            return False
        if chunk.playback_active or time.perf_counter() - self.voiced_at > VOICING_WAIT_S:
            self.voiced_at = None
            return False
        return True

    def _warm_up(self) -> None:
        """Prefill the conversation up to where the next user turn starts, while nobody waits for it."""
        stem = protocol.chat_prompt(self.history).rsplit("<|im_start|>", 1)[0] + "<|im_start|>user\n"
        self.llm.prefill(self.llm.tokenize(stem))
        self.warm = True

    # --- barge-in ------------------------------------------------------------------------------
    def hear_overlaps(self, judge: OverlapJudge) -> bool:
        """It transcribes the user: it asks the judge itself (which also weighs levels against echo and
        background) and yields in its own step."""
        self.overlap_judge = judge
        return True

    def yield_turn(self) -> None:
        """Drop the rest of the reply (an interruption); what was already said stays in the history."""
        if self.reply is not None:
            self._remember_reply()
            self.reply.close()
            self.reply = None

    def _remember_reply(self) -> None:
        assert self.reply is not None
        text = self.reply.stream.text.strip()
        if isinstance(self.reply.stream, FixedStream) and not protocol.parse(text, finished=True).speech:
            # A rule's bare span is not the model's words: kept in its history, it taught the 0.5B model to
            # delegate whatever came next and to say the last answer again ("How long is left?" got "I'll remind
            # you to take the pizza out in 20 seconds."). The answer, once spoken, is the assistant's turn.
            self.warm = False
            return
        if len(text) > HISTORY_CHARS:
            # A story told at length is kept in the history by its first sentences: the whole of it would make
            # every prefill after a trim of the history (and after a restart) cost minutes on a busy machine.
            cut = max((m.end() for m in re.finditer(r"[.!?](?=\s)", text[:HISTORY_CHARS])), default=HISTORY_CHARS)
            text = text[:cut].strip()
        self.history.append(("assistant", text or protocol.LISTEN))
        self.warm = False

    def _answer_to_holding(self) -> ResultToSay | None:
        """The first result delivered after the holding phrase's delegate span went out, if one waits."""
        if self.holding_at is None:
            return None
        return next((r for r in self.results if self.arrival.get(r.id, -1) >= self.holding_at), None)

    def _stop_holding(self, chunk: Chunk, out: ChunkOutput, playing: bool) -> None:
        """The answer is back: what is left of the holding phrase is skipped, and its playback stopped."""
        if self.reply is not None:
            self._remember_reply()
            self.reply.close()
            self.reply = None
        if playing:
            out.cut_playback = True
            self.speak_until_ns = chunk.t_end_ns
        out.info["holding_cut"] = playing

    def _speak_result(self, out: ChunkOutput, now_ns: int, result: ResultToSay | None = None) -> None:
        self.holding_at = None
        if result is None:
            result = self.results[0]
        self.results.remove(result)
        self.arrival.pop(result.id, None)
        text = protocol.strip_protocol(result.text)
        out.control, out.text, out.turn_end, out.backend_id = "speak", text, True, result.id
        if not is_progress(result):  # in the history, the 0.5B model says "I'm still checking" to anything
            self.history.append(("assistant", text))
        self.warm = False
        self.spoken_words.extend(barge_in.words(text))
        self.speak_until_ns = max(self.speak_until_ns, now_ns) + int(len(text) / CHARS_PER_S * 1e9)

    # --- a restart ------------------------------------------------------------------------------
    def checkpoint(self) -> dict[str, Any]:
        """The conversation in words: the history, what an unfinished reply has said, results not yet spoken.

        Not the user's words still being spoken: a restart hears the chunks it had not decided, not earlier ones.
        """
        said = ""
        if self.reply is not None:  # the words handed out so far; the rest of the reply is not taken up again
            r = self.reply
            said = protocol.parse(r.stream.text, r.stream.finished).speech[:r.spoken_upto].strip()
        return {"history": [list(turn) for turn in self.history], "said": said,
                "results": [[r.id, r.text] for r in self.results], "seen_results": sorted(self.seen_results),
                "spoken_words": list(self.spoken_words)}

    def resume(self, folder: Path, state: dict[str, Any]) -> dict[str, Any]:
        """After a restart: the history (an unfinished reply as far as it was said) and the prompt prefilled."""
        if not state:
            return {}
        self.history = [(role, text) for role, text in state["history"]]
        if state.get("said"):
            self.history.append(("assistant", state["said"]))
        self.results = collections.deque(ResultToSay(rid, text) for rid, text in state["results"])
        self.seen_results = set(state["seen_results"])
        self.spoken_words.extend(state["spoken_words"])
        t0 = time.perf_counter()
        self._warm_up()
        users = [text for role, text in self.history if role == "user"]
        return {"history_turns": len(self.history), "last_user": users[-1] if users else "",
                "prefill_ms": round((time.perf_counter() - t0) * 1e3, 1)}

    # --- the rest of the interface ---------------------------------------------------------------
    def deliver(self, result: ResultToSay) -> None:
        if result.id not in self.seen_results:  # a repeated result id is ignored
            self.seen_results.add(result.id)
            self.results.append(result)
            self.arrival[result.id] = self.delivered
            self.delivered += 1

    def withdraw(self, result_id: str) -> bool:
        kept = collections.deque(r for r in self.results if r.id != result_id)
        dropped, self.results = len(kept) < len(self.results), kept
        self.arrival.pop(result_id, None)
        return dropped

    def close(self) -> None:
        if self.reply is not None:
            self.reply.close()
        if self.draft is not None:
            self.draft.reply.close()
        self.llm.close()


def build(config: dict) -> DefaultFrontend:
    threads = max(1, int(config.get("threads", 1) or 1))
    s = Settings(threads=threads)
    if not config.get("realtime", True):
        s.llm_budget = None  # a virtual clock waits for the frontend: decode the same pieces on any machine
    for key in ("endpoint_ms", "max_reply_tokens", "tokens_per_chunk"):
        if config.get(key) is not None:
            setattr(s, key, int(config[key]))
    if config.get("asr"):
        s.asr = str(config["asr"])
    if config.get("rules") is not None:
        s.rules = bool(config["rules"])
    if config.get("number_reading") is not None:
        s.number_reading = bool(config["number_reading"])
    vad = SileroVad(threads)
    if config.get("asr_beam"):
        s.asr_beam = max(1, int(config["asr_beam"]))
    asr = Transcriber(threads, s.asr, beam_size=s.asr_beam)
    # `llm_gguf`: another chat model in its place (`bench chat --llm-gguf`, `bench answers --llm-gguf` compare them)
    gguf = Path(config["llm_gguf"]) if config.get("llm_gguf") else assemble(QWEN_GGUF)
    llm = DecisionModel(gguf, threads, n_ctx=int(config.get("context") or 2048),
                        kv_type=str(config.get("kv_type") or "f16"))
    return DefaultFrontend(vad, asr, llm, s)
