"""The frontend node's side of barge-in: the policy, fed by capture's speech activity and the transcript.

Capture ducks playback at a speech onset and says so; at the next chunk
boundary this decides. The judge is handed to the frontend through the
frontend interface (`Frontend.hear_overlaps`): a frontend that transcribes
the user (the embedded default) asks it itself, with its own transcript of
the overlapping speech, and yields in its own step. For any other frontend
the policy is applied here after the step, from the chunk audio and a
transcript of the overlap that the judge makes itself (overlap_asr.py; it
runs while the frontend steps); an interruption is then forced even if the
model went on, and the frontend is told to end its turn
(`Frontend.yield_turn`). Either way the decision, its reason and its timing
go into the chunk's journal record, and a decided overlap restores the
volume. Until then, each chunk carries the overlap's onset
(`Chunk.user_speech_onset_ns`), so a frontend can tell that the user is
talking over it.
"""
from __future__ import annotations

import collections
from concurrent.futures import Future

import numpy as np

from edge import messages as m
from edge.audio_format import RATE
from edge.bargein import words as barge_in
from edge.bargein.options import BargeInOptions
from edge.bargein.overlap_asr import OverlapTranscriber
from edge.bargein.policy import BargeInPolicy
from edge.bargein.voice import VoiceCue
from edge.frontend.base import Chunk, ChunkOutput, Decision, Frontend, Overlap
from edge.wire import Envelope

NS = 1_000_000_000
CARRIED = frozenset({"other"})  # background is weighed again at every boundary: its level firms up
SAME_TURN_GAP_NS = 600_000_000  # pauses up to this keep one stretch of speech (the benchmark's user gap)
ANSWERED_WITHIN_NS = 4 * NS  # the user's speech that ended this long before the reply starts is what it answers


class BargeInJudge:
    def __init__(self, frontend: Frontend, config: dict, transcriber: OverlapTranscriber | None = None) -> None:
        """`transcriber` reads the overlapping speech for a frontend that does not hear it itself (None: the
        policy decides from level and length)."""
        options = BargeInOptions.from_config(config)
        self.voice = VoiceCue.load(options)
        self.frontend_hears = frontend.hear_overlaps(self.decide_overlap)
        # The first reading is the frontend's own recognizer, or the judge's (overlap_asr.py, `asr`).
        first = getattr(getattr(frontend, "asr", None), "name", None) if self.frontend_hears else \
            options.asr
        self.rereader = OverlapTranscriber.rereader(config, first, preload=options.realtime)
        self.policy = BargeInPolicy(background_margin_db=options.background_margin_db,
                                    voice=self.voice, reread=self.rereader.read if self.rereader else None)
        # The user's own speech while nothing played, (onset, end): enrolled as the user's voice once the
        # assistant answers it (speech nobody answered may be a television or someone else in the room).
        self.unanswered: list[tuple[int, int]] = []
        self.frontend = frontend
        self.last: Decision | None = None
        self.duck: tuple[int, int] | None = None  # (speech onset, duck time) while playback is ducked
        self.onset: m.SpeechActivity | None = None  # the newest onset heard over playback
        self.offset_ns: int | None = None  # ... and when it stopped, once it has
        self.history: collections.deque[tuple[int, np.ndarray]] = collections.deque(maxlen=16)
        # Speech judged aimed elsewhere stays so until it pauses: its later words have
        # lost the vocative ("Honey, ... | have you seen my keys?") but not the addressee.
        self.carry: str | None = None
        self.last_offset_ns: int | None = None
        self.decisions: collections.Counter[str] = collections.Counter()
        self.transcriber = None if self.frontend_hears else transcriber
        self.heard_index: int | None = None  # the newest chunk whose audio is in `history`
        self.transcript: tuple[int, Future[tuple[str, float]]] | None = None  # (chunk index, its transcription)
        self.own_words: collections.deque[str] = collections.deque(maxlen=80)  # the reply's recent words (echo)

    def _judge(self, overlap: Overlap) -> Decision:
        """The policy's decision, unless this stretch of speech was already judged aimed elsewhere."""
        if self.carry is not None:
            return Decision(self.carry, barge_in.words(overlap.text), f"the rest of speech already judged {self.carry}")
        d = self.policy.decide(overlap)
        if d.decision in CARRIED or (d.similarity is not None and d.similarity < (d.threshold or 0.0)):
            self.carry = d.decision  # another voice stays another voice until it pauses
        return d

    def decide_overlap(self, overlap: Overlap) -> Decision:
        """What speech over the reply means, for a frontend that hears it itself (asked in its step)."""
        self.last = self._judge(overlap)
        return self.last

    def overlap_onset(self, t_start_ns: int, t_end_ns: int) -> int | None:
        """The onset of speech heard over playback that is still open in chunk [t_start_ns, t_end_ns).

        Open: it started before the chunk's end, and it has not been decided yet, or is still being
        spoken. Once decided (the next boundary, or a later one while pending) it is no longer carried.
        """
        o = self.onset
        if o is None or o.onset_ns >= t_end_ns:
            return None
        if self.duck is None and self.offset_ns is not None and self.offset_ns <= t_start_ns:
            return None  # it stopped before this chunk and no decision waits on it
        return o.onset_ns

    def on_message(self, env: Envelope) -> None:
        msg = env.msg
        if isinstance(msg, m.SpeechActivity):
            if msg.kind == "offset" and not msg.playback:
                self.policy.observe_user(msg.level_db, msg.voiced_ms)  # the user's own level, for background
                self.unanswered = self.unanswered[-3:] + [(msg.onset_ns, msg.t_ns)]
            if msg.kind == "onset":
                pause = None if self.last_offset_ns is None else msg.onset_ns - self.last_offset_ns
                if pause is None or pause > SAME_TURN_GAP_NS:
                    self.carry = None  # a new stretch of speech: judged afresh
            else:
                self.last_offset_ns = msg.t_ns
            if msg.kind == "onset" and msg.playback:
                self.onset, self.offset_ns = msg, None
                for reader in (self.transcriber, self.rereader):
                    if reader is not None:
                        reader.warm()  # the boundary that decides is up to a chunk away
            elif msg.kind == "offset" and self.onset is not None and msg.onset_ns == self.onset.onset_ns:
                self.offset_ns = msg.t_ns
        elif isinstance(msg, m.Duck) and env.src == "capture" and msg.gain < 1.0:
            self.duck = (msg.onset_ns, env.t_ns)

    def _audio_since(self, t_ns: int) -> np.ndarray:
        parts = [a[max(0, (t_ns - t0) * RATE // NS):] for t0, a in self.history if t0 + len(a) * NS // RATE > t_ns]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def _enrol_answered(self, chunk: Chunk, out: ChunkOutput) -> None:
        """The assistant speaks: the user's speech just before it was a turn it answered, in the user's voice."""
        if self.voice is None or not self.unanswered or not out.text or out.info.get("barge_in"):
            return
        for onset, end in self.unanswered:
            if end >= chunk.t_start_ns - ANSWERED_WITHIN_NS:  # older speech went unanswered
                audio = self._audio_since(onset)
                self.voice.enrol(audio[:max(0, (end - onset) * RATE // NS)])
        self.unanswered.clear()

    def hear(self, chunk: Chunk) -> None:
        """The chunk arrived (before the frontend's step): keep its audio, and start reading the overlap."""
        self.history.append((chunk.t_start_ns, chunk.audio))
        self.heard_index = chunk.index
        if self.transcriber is not None and self.transcriber.failed is None and self.duck is not None:
            self.transcript = (chunk.index, self.transcriber.start(self._audio_since(self.duck[0])))

    def decide(self, chunk: Chunk, out: ChunkOutput) -> m.Duck | None:
        """Apply the policy after the frontend's step; returns the volume restore to publish, if any."""
        if self.heard_index != chunk.index:
            self.hear(chunk)
        bi = out.info.get("barge_in")
        if bi is None and not self.frontend_hears and self.duck is not None:
            bi = self._decide_here(chunk, out)
        self.transcript = None
        self._enrol_answered(chunk, out)
        self.own_words.extend(barge_in.words(out.text))
        if bi is not None:
            if self.last is not None and self.frontend_hears:
                bi.update(reason=self.last.reason, level_db=_r(self.last.level_db),
                          user_level_db=_r(self.last.user_level_db), **_voice(self.last))
                self.last = None
            if self.duck is not None:
                bi.update(duck_ns=self.duck[1], duck_after_onset_ms=(self.duck[1] - self.duck[0]) / 1e6)
            self.decisions[bi["decision"]] += 1
        if self.duck is None:
            return None
        decision = bi["decision"] if bi is not None else "none"
        if decision == "pending":
            return None  # still being spoken and not yet readable: stay ducked until the next boundary
        onset = self.duck[0]
        self.duck, self.onset = None, None  # decided: later chunks no longer carry this overlap
        return m.Duck(1.0, f"barge-in decided: {decision}", onset)

    def _decide_here(self, chunk: Chunk, out: ChunkOutput) -> dict:
        """A frontend that does not hear overlaps: the policy reads the chunk audio and its transcript, if any."""
        assert self.duck is not None
        onset = self.duck[0]
        end = self.offset_ns if self.offset_ns is not None else chunk.t_end_ns
        ongoing = self.offset_ns is None
        text, asr_ms = self._words(chunk, out, onset)
        d = self._judge(Overlap(text, self._audio_since(onset), (end - onset) / 1e6, ongoing, set(self.own_words)))
        if d.interrupts and not out.interrupt:
            out.interrupt, out.control, out.text, out.turn_end = True, "listen", "", False
            self.frontend.yield_turn()  # the model went on: its turn ends here, so the next chunk may listen
        bi = {"decision": d.decision, "text": text, "onset_ns": onset, "decided_ns": chunk.t_end_ns,
              "after_onset_ms": (chunk.t_end_ns - onset) / 1e6, "voiced_ms": (end - onset) / 1e6,
              "reason": d.reason, "level_db": _r(d.level_db), "user_level_db": _r(d.user_level_db),
              "source": "policy", **_voice(d)}
        if asr_ms is not None:
            bi["asr_ms"] = round(asr_ms, 1)
        out.info["barge_in"] = bi
        return bi

    def _words(self, chunk: Chunk, out: ChunkOutput, onset: int) -> tuple[str, float | None]:
        """What the overlapping speech says: the frontend's transcript, else the judge's own, else nothing."""
        t = self.transcriber
        if out.user_text or t is None or t.failed is not None:
            return out.user_text, None
        job = self.transcript[1] if self.transcript and self.transcript[0] == chunk.index else \
            t.start(self._audio_since(onset))
        got = t.result(job)
        return got if got is not None else ("", None)

    def close(self) -> None:
        if self.transcriber is not None:
            self.transcriber.close()
        if self.rereader is not None:
            self.rereader.close()
        if self.voice is not None:
            self.voice.close()


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def _voice(d: Decision) -> dict:
    """The cues' part of a decision, for the journal: similarity to the user and the threshold, and the
    second reading of the words with its cost."""
    got = {} if d.similarity is None else {"voice_similarity": round(d.similarity, 3), "voice_threshold": d.threshold}
    if d.reread is not None:
        got.update(reread=d.reread, reread_ms=_r(d.reread_ms))
    return got
