"""The embedded default frontend: Silero VAD, whisper base and Qwen2.5 0.5B behind `step(chunk)`.

Per chunk: VAD marks the user's speech. When an utterance has been
followed by enough silence (`endpoint_ms`, checked at the chunk boundary)
it is transcribed and the LLM starts a reply under the protocol grammar;
the reply goes out a sentence per chunk, the first one as soon as it is
whole (live, as soon as its first few words are: the rest of it follows
as the next piece). Speech over the assistant's reply is heard here (its own VAD and
transcript) and decided at the chunk boundary by the barge-in judge it is
handed (edge/bargein): a backchannel lets the reply go on, an interruption
drops it. Harness results are spoken at an idle listen boundary, or in place
of the holding phrase that followed their delegate span when they are back
while it still plays (at a boundary, from what has been delivered by then).
A restarted frontend gets its chat history back (`resume`) and prefills it again. A turn whisper itself
found unlikely is asked back instead of answered (edge/frontend/default/asking.py).

Replies drafted before the turn is known to have ended: edge/frontend/default/drafting.py.
"""
from __future__ import annotations

import collections
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from edge.audio_format import RATE
from edge.bargein import words as barge_in
from edge.bargein.policy import by_words
from edge.frontend.base import Chunk, ChunkOutput, DelegateSpan, Frontend, Overlap, OverlapJudge, ResultToSay
from edge.frontend.default import grammar as protocol
from edge.frontend.default.asking import AskingBack
from edge.frontend.default.conversation import Conversation
from edge.frontend.default.drafting import ASR_TAIL_NS, Draft, Drafting, HeardAhead
from edge.frontend.default.spoken_results import CHARS_PER_S, SpokenResults
from edge.frontend.default.settings import Settings
from edge.frontend.default.turn import Utterance, answerable, is_progress
from edge.detect import number_reading
from edge.detect.asr import Heard, Transcriber
from edge.frontend.default.llm import DecisionModel
from edge.frontend.default.reply import FixedStream, Reply
from edge.frontend.default.rules import by_rule
from edge.detect.vad import FRAME_NS, SileroVad

log = logging.getLogger(__name__)
VOICING_WAIT_S = 2.0  # live: how long the warm-up waits for first words sent to the voice to be heard playing


class DefaultFrontend(Conversation, Drafting, SpokenResults, AskingBack, Frontend):
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
        self.heard_live = False  # the chunk being stepped was handed over in pieces before its boundary
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
            elif utt.over_playback or not (silence_ns >= self.s.draft_ms * 1_000_000 or
                                           utt.voiced_frames * FRAME_NS >= 500_000_000):
                pass  # begun over the reply, or too little said yet: nothing to read
            elif self.heard_live and silence_ns < ASR_TAIL_NS and utt.read is not None:
                # Live, the user is still talking at this boundary (or has paused too briefly for the tail a
                # turn is read with), and the words so far were read once already (their prefill is most of
                # the turn's): the turn's transcript, prefill and first words are made the moment the pause is
                # long enough (hear_ahead). Reading again now would hold that work up by a whole recognition
                # when the user stops while it runs (late in the turn, the likeliest moment).
                out.info["read_at_endpoint"] = True
            elif silence_ns >= self.s.draft_ms * 1_000_000:
                # A pause too short to end the turn yet: if the next boundary ends it, the reply is ready then.
                text = self._transcribe(utt, out)
                if not self._draft(utt, text, out):
                    self._prefill_partial(text, out)
            else:
                self._prefill_partial(self._transcribe(utt, out), out)
        answer = self._answer_to_holding() if self.utt is None and not out.interrupt else None
        if answer is not None:
            self._stop_holding(chunk, out, playing)
            self._speak_result(out, chunk.t_end_ns, answer)
        elif self.reply is not None and not out.interrupt:
            self._continue(chunk, out)
        elif self.utt is None and self.reply is None and not playing and self.results:
            self._speak_result(out, chunk.t_end_ns)
        elif self.utt is None and self.reply is None and not self.warm and not self._voicing(chunk) and \
                not self._awaiting_answer():
            t1 = time.perf_counter()
            self._warm_up()
            out.info["warm_ms"] = round((time.perf_counter() - t1) * 1e3, 1)
        if out.text and not chunk.playback_active and self.voiced_at is None:
            self.voiced_at = time.perf_counter()  # the user waits for these: see _voicing
        self.prev_audio = chunk.audio[-self.s.preroll_ms * RATE // 1000:]
        out.info["cpu_ms"] = round((time.process_time() - cpu0) * 1e3, 1)
        return out

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
        heard = self.asr.heard
        if verdict.decision in barge_in.GO_ON:
            self.utt = None  # go on: the reply continues
        elif verdict.decision == "interrupt":
            out.interrupt = True
            self.yield_turn()
            self.speak_until_ns = chunk.t_end_ns
            utt.over_playback = False  # from now on it is the user's turn
            if ended:
                self.utt = None
                self._answer(chunk, utt, out, text, heard)

    def _answer(self, chunk: Chunk, utt: Utterance, out: ChunkOutput, text: str | None = None,
                heard: Heard | None = None) -> None:
        """The user's turn ended: transcribe it and start the reply (or ask back, when it was probably misheard).
        `heard`: how sure whisper was of `text`, when it was not read by `_transcribe`."""
        if text is None:
            text = self._transcribe(utt, out)
        if heard is None:
            heard = utt.heard(text)
        out.user_text = text
        out.info["user_end_ns"] = utt.last_voice_ns
        about = self._confirmed(text) if text.strip() else None
        if about is not None:  # "Did you say X?" "Yes.": X is answered, its doubt settled by the yes
            text, heard = about, None
            out.info["confirmed"] = about
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
        asked = self._ask_back(text, heard, out)
        if asked is not None:
            if draft is not None:
                draft.reply.close()
            self.history = self._with_user(text)
            self.reply = Reply(FixedStream(asked))
            return
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
        self.reply = Reply(stream, first_words=self.s.llm_budget is not None)  # live: the voice starts sooner

    def see(self, t_ns: int, description: str) -> None:
        self.scene = (t_ns, description)

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
        heard = self.asr.heard
        out.info["asr_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
        out.info["asr_audio_ms"] = round(len(audio) / RATE * 1e3, 1)
        if self.s.number_reading:
            t1 = time.perf_counter()
            again = number_reading.reread(self.asr, text)
            if again is not None:
                out.info["asr_reread"] = again.journal() | {"ms": round((time.perf_counter() - t1) * 1e3, 1)}
                heard = again.heard(heard)
                text = again.text
        if heard is not None:
            out.info["asr_logprob"] = round(heard.logprob, 3)
        utt.read = (utt.last_voice_ns, utt.audio_start_ns + len(audio) * 1_000_000_000 // RATE, text, heard)
        return text

    def _continue(self, chunk: Chunk, out: ChunkOutput) -> None:
        assert self.reply is not None
        budget = None
        if self.s.llm_budget is not None:
            # The first words are what the user waits for: they may overrun the chunk (one late step is
            # caught up by the quick listening steps after it); later pieces keep to the budget.
            share = self.s.first_budget if self.reply.opening else self.s.llm_budget
            budget = share * (chunk.t_end_ns - chunk.t_start_ns) / 1e9
        cap = self.s.first_tokens if self.reply.opening else self.s.tokens_per_chunk
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

    def _awaiting_answer(self) -> bool:
        """Live, a delegated request's answer is awaited and nothing is said meanwhile: the warm-up waits until
        it has been said (a prefill running when it comes back holds up its words, and can make them miss
        the next boundary)."""
        return self.s.llm_budget is not None and self.holding_at is not None

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

    # --- a restart ------------------------------------------------------------------------------
    def checkpoint(self) -> dict[str, Any]:
        """The conversation in words: the history, what an unfinished reply has said, results not yet spoken.

        Not the user's words still being spoken: a restart hears the chunks it had not decided, not earlier ones.
        """
        said = ""
        if self.reply is not None:  # the words handed out so far; the rest of the reply is not taken up again
            r = self.reply
            said = protocol.parse(r.stream.text, r.stream.finished).speech[:r.said_upto].strip()
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

    def close(self) -> None:
        if self.reply is not None:
            self.reply.close()
        if self.draft is not None:
            self.draft.reply.close()
        self.llm.close()
