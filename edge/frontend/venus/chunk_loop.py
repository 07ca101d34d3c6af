"""The chunk protocol of the reference (docs/reference.md) on llama.cpp, token by token.

Once: the system prompt ("Streaming Omni Conversation." by default). Per chunk:
prefill `<unit>`, then (Omni) `<image>` + the frame's 64 embeddings + `</image>`
(each further slice as `<slice>` + 64 + `</slice>`), then the chunk's audio
embeddings. Decode: `<|listen|>` (silent this chunk), or a turn's tokens
(`<|speak|>`, words, a delegate span), ended by `<|chunk_eos|>` (drawn on its
own from the untouched distribution first, or appended at the per-chunk cap);
`<|turn_eos|>` ends the turn and is followed by a chunk terminator in the same
unit (`<|listen|>` or `<|chunk_eos|>`). The terminator goes in with `</unit>`.
Listen is masked while a turn is open. Delegate spans are read from token ids;
spoken tokens keep their hidden states for the TTS. At an idle listen
boundary the oldest waiting harness result is prefilled as
`<backend>text</backend>`; the next turn speaks it. When the user barges in and
the model went on speaking, `yield_turn` closes its turn the way the reference
forces a listen (see there).
"""
from __future__ import annotations

import codecs
import collections
import dataclasses
import re
import time
from dataclasses import dataclass, field

import numpy as np

from edge.protocol.spans import DelegateParser, Span
from edge.protocol.strip import strip_protocol_tokens
from edge.protocol.tokens import (BACKEND_CLOSE, BACKEND_OPEN, CHUNK_EOS, IMAGE_CLOSE, IMAGE_OPEN, LISTEN,
                                 PROTOCOL_TOKENS, TURN_EOS, UNIT_CLOSE, UNIT_OPEN, TokenMap, TokenMapError)
from edge.backends.gguf_rows import token_rows
from edge.frontend.venus.kv_window import KVWindow
from edge.frontend.venus.vocab_ids import control_token, sampler_ids
from edge.backends.llama import LlamaModel
from edge.backends.duplex_sampler import DuplexSampler
from edge.backends.sampling import FORCE_BIAS
from edge.bundle.settings import VenusSettings

INPUT_ONLY = (UNIT_OPEN, UNIT_CLOSE, IMAGE_OPEN, IMAGE_CLOSE, BACKEND_OPEN, BACKEND_CLOSE)
SLICE_OPEN, SLICE_CLOSE = "<slice>", "</slice>"  # MiniCPM-o's markers around each further image slice
CHUNK_TTS_EOS = "<|chunk_tts_eos|>"

# A chunk's media in order: ("image", one array per slice, or one array for one slice), ("audio", array).
Media = tuple[str, "np.ndarray | list[np.ndarray]"]


@dataclass
class ChunkResult:
    control: str  # "listen" | "speak"
    text: str = ""
    tokens: list[int] = field(default_factory=list)  # every token of the unit's output, terminator included
    spoken_ids: list[int] = field(default_factory=list)  # the visible tokens, in order
    hidden: np.ndarray | None = None  # (len(spoken_ids), n_embd) hidden states of the spoken tokens
    spans: list[Span] = field(default_factory=list)
    voided: list[str] = field(default_factory=list)
    turn_end: bool = False
    backend_id: str = ""  # the harness result these words speak
    injected: list[str] = field(default_factory=list)  # result ids prefilled after this chunk
    refused: list[str] = field(default_factory=list)  # forced items the protocol rules did not allow
    prefill_tokens: int = 0
    prefill_at: int = 0  # the position the unit's input starts at (after any slide of the KV window)
    prefill_s: float = 0.0
    prefill_cpu_s: float = 0.0  # this thread's CPU time: what the work cost, apart from waiting for a core
    decode_tokens: int = 0
    decode_s: float = 0.0
    decode_cpu_s: float = 0.0


def protocol_tokens(llm: LlamaModel) -> TokenMap:
    """Protocol token ids, each one CONTROL token (so tool text can never open or close a span)."""
    tokens = TokenMap.from_lookup(lambda s: llm.tokenize(s, special=True))
    for name in PROTOCOL_TOKENS:
        if llm.piece(tokens.id(name)):
            raise TokenMapError(f"{name} is not a control token in {llm.path.name}, so tool text could inject it; "
                                "rebuild the bundle with this venus-export")
    return tokens


def cap_sentences(text: str, sentences: int, chars: int) -> str:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(parts[:sentences])[:chars].strip()


@dataclass
class Waiting:
    """A harness result between delivery and the turn that speaks it."""

    result_id: str
    work_id: str
    text: str


class ChunkLoop:
    def __init__(self, llm: LlamaModel, settings: VenusSettings) -> None:
        self.llm, self.s = llm, settings
        self.tok = protocol_tokens(llm)
        t = self.tok.id
        self.ids = {name: t(name) for name in PROTOCOL_TOKENS}
        self.sampler = DuplexSampler(settings.sampling, sampler_ids(llm, self.ids))
        self.parser = DelegateParser(self.tok, llm.piece)
        self.kv = KVWindow(llm, settings.kv_high, settings.kv_low, settings.kv_compact_mb)
        base = [t(n) for n in INPUT_ONLY]
        # Masks: input-only tokens are never written; listen is not allowed while a turn is open.
        self.mask_in_turn = np.array(base + [t(LISTEN)], np.int64)
        self.mask_idle = np.array(base, np.int64)
        # <|chunk_tts_eos|> ends a unit as the reference's chunk terminators do, where the vocabulary has it.
        tts_eos = control_token(llm, CHUNK_TTS_EOS)
        self.terminators = (t(LISTEN), t(CHUNK_EOS)) + ((tts_eos,) if tts_eos is not None else ())
        self.after_turn = np.array(self.terminators, np.int64)  # what may follow <|turn_eos|>
        self.slice_ids = (control_token(llm, SLICE_OPEN), control_token(llm, SLICE_CLOSE))
        self.in_turn = False
        self.turn_tokens = 0
        self.output_from: int | None = None  # KV position where the last unit's output starts, while it spoke
        self.pending: list[Waiting] = []  # delivered, waiting for an idle boundary, in the harness's release order
        self.awaiting: collections.deque[Waiting] = collections.deque()  # prefilled, waiting for their turn
        self.seen_results: set[str] = set()
        self.spoken_work: set[str] = set()  # work whose result a turn spoke in full: a later copy is ignored
        self.turn_work = ""  # the work the current (or last) turn speaks
        self.speaking_backend = ""
        self.text_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.typed: list[str] = []  # text typed by the user, for the next unit (the reference's text list)
        # Rows of the embedding table for the tokens a prefill uses: a chunk's whole prefill is one batch.
        named = [(n, t(n)) for n in PROTOCOL_TOKENS]
        named += [(n, i) for n, i in zip((SLICE_OPEN, SLICE_CLOSE), self.slice_ids) if i is not None]
        rows = token_rows(llm.path, [i for _, i in named]) if settings.single_batch_prefill else None
        self.rows = None if rows is None or rows.shape[1] != llm.n_embd else {
            i: rows[k] for k, (_, i) in enumerate(named)}
        if settings.system_prompt:
            llm.prefill_tokens(llm.tokenize(settings.system_prompt, special=True), want_logits=False)
        self.kv.keep = llm.n_past

    # --- results from the harness ----------------------------------------------------------------
    def deliver(self, result_id: str, text: str, work_id: str = "") -> bool:
        """Queue a result for the next idle boundary. A repeated result id is ignored; a later release of the
        same work replaces a copy still waiting, and is ignored once a turn has spoken that work (unless the
        user cut that turn: then the harness offers it again on purpose)."""
        if result_id in self.seen_results or (work_id and work_id in self.spoken_work):
            return False
        self.seen_results.add(result_id)
        clean = cap_sentences(strip_protocol_tokens(text), self.s.backend_max_sentences, self.s.backend_max_chars)
        if not clean:
            return False
        if work_id:
            for w in self.pending:
                if w.work_id == work_id:
                    w.result_id, w.text = result_id, clean
                    return True
            for w in self.awaiting:
                if w.work_id == work_id:  # already in the context: its turn will speak it under the new id
                    w.result_id = result_id
                    return True
        self.pending.append(Waiting(result_id, work_id, clean))
        return True

    def withdraw(self, result_id: str) -> bool:
        """Drop a result still waiting for a boundary (one already in the context is its turn's to speak)."""
        kept = [w for w in self.pending if w.result_id != result_id]
        dropped, self.pending = len(kept) < len(self.pending), kept
        return dropped

    def type_text(self, text: str) -> bool:
        """Text the user typed (or `--prompt`): it enters the next unit after the chunk's media, as plain
        text tokens (never special: typed text cannot write a protocol token)."""
        clean = strip_protocol_tokens(text).strip()
        if clean:
            self.typed.append(clean)
        return bool(clean)

    # --- forcing (test-only) -------------------------------------------------------------------
    def _forced(self, index: int) -> list[int]:
        out: list[int] = []
        items = self.s.forced.get(index)
        if items is None:
            after = self.awaiting and not self.in_turn and self.s.forced_after_backend
            items = self.s.forced_after_backend if after else self.s.forced.get(-1, [])
        for item in items:
            out += [self.ids[item]] if item in self.ids else self.llm.tokenize(item, special=False)
        return out

    # --- one chunk -----------------------------------------------------------------------------
    def run(self, index: int, heard_ns: int, media: list[Media]) -> ChunkResult:
        """`heard_ns`: the end of the chunk on the session clock, what the model has heard when it decodes
        (a span opened in this unit freezes its evidence there)."""
        res = ChunkResult("listen")
        seq = self._layout(media)
        for text in self.typed:
            seq += self.llm.tokenize(text, special=False)
        self.typed = []
        need = sum(1 if isinstance(item, int) else len(item) for item in seq) + self.s.max_speak_tokens + 4
        self.kv.make_room(need)
        self.kv.unit_start()
        t0, c0 = time.perf_counter(), time.thread_time()
        n0 = self.llm.n_past
        logits = self._prefill(seq)
        res.prefill_tokens, res.prefill_at, res.prefill_s = self.llm.n_past - n0, n0, time.perf_counter() - t0
        res.prefill_cpu_s = time.thread_time() - c0
        output_from = self.llm.n_past
        terminator = self._decode(index, heard_ns, logits, res)
        self.llm.prefill_tokens([terminator, self.ids[UNIT_CLOSE]], want_logits=False)
        self.output_from = output_from if res.control == "speak" else None
        if res.control == "listen" and not self.in_turn and self.pending:
            self._inject(res)
        self.kv.note()
        return res

    def _layout(self, media: list[Media]) -> list[int | np.ndarray]:
        """The unit's input: token ids and embedding blocks, in the reference's order."""
        seq: list[int | np.ndarray] = [self.ids[UNIT_OPEN]]
        for kind, emb in media:
            if kind != "image":
                seq.append(emb)  # type: ignore[arg-type]
                continue
            slices = list(emb) if isinstance(emb, list) else [emb]
            seq += [self.ids[IMAGE_OPEN], slices[0], self.ids[IMAGE_CLOSE]]
            if len(slices) > 1 and None in self.slice_ids:
                raise ValueError("this bundle's vocabulary has no <slice> tokens, so a frame must be one slice; "
                                 "set max_slices to 1 in venus.json")
            for extra in slices[1:]:
                seq += [self.slice_ids[0], extra, self.slice_ids[1]]  # type: ignore[list-item]
        return seq

    def _prefill(self, seq: list[int | np.ndarray]) -> np.ndarray:
        """One embedding batch when the token rows are known; else section by section."""
        if self.rows is not None and all(not isinstance(i, int) or i in self.rows for i in seq):
            parts = [self.rows[item][None] if isinstance(item, int) else item for item in seq]
            return self.llm.prefill_embeddings(np.concatenate(parts).astype(np.float32), want_logits=True)
        logits = None
        i = 0
        while i < len(seq):
            if isinstance(seq[i], int):
                j = i
                while j < len(seq) and isinstance(seq[j], int):
                    j += 1
                logits = self.llm.prefill_tokens(list(seq[i:j]), want_logits=j == len(seq))  # type: ignore[arg-type]
                i = j
            else:
                logits = self.llm.prefill_embeddings(seq[i], want_logits=i == len(seq) - 1)  # type: ignore[arg-type]
                i += 1
        assert logits is not None
        return logits

    def _decode(self, index: int, heard_ns: int, logits: np.ndarray, res: ChunkResult) -> int:
        """Decode the unit's output; returns its terminator (fed with `</unit>`)."""
        ids = self.ids
        forced = self._forced(index)
        spoken_bytes = bytearray()
        hidden: list[np.ndarray] = []
        ended = False
        t0, c0 = time.perf_counter(), time.thread_time()
        terminator = ids[CHUNK_EOS]
        while True:
            if len(res.tokens) >= self.s.max_speak_tokens - 1:
                res.tokens.append(ids[CHUNK_EOS])  # the cap: the last place is the chunk's end, not sampled
                break
            mask = self.mask_in_turn if self.in_turn else self.mask_idle
            allow = self.after_turn if ended else None
            bias = {}
            if forced:
                if forced[0] in mask or (allow is not None and forced[0] not in allow):
                    res.refused.append(self.tok.name(forced[0]) or str(forced[0]))
                    forced.pop(0)
                    continue
                bias = {forced[0]: FORCE_BIAS}
            tok = self.sampler.sample(logits, mask, bias, allow)
            if forced and tok == forced[0]:
                forced.pop(0)
            res.tokens.append(tok)
            step = self.parser.feed(tok, heard_ns)
            if step.span:
                res.spans.append(step.span)
            if step.voided:
                res.voided.append(step.voided)
            if tok in self.terminators:
                terminator = tok
                break
            if tok == ids[TURN_EOS]:
                logits, _ = self.llm.step(tok, copy=False)
                if self.in_turn:
                    res.turn_end = True
                self.in_turn, self.speaking_backend, ended = False, "", True
                continue
            if not self.in_turn:
                self.in_turn, self.turn_tokens = True, 0
                self.speaking_backend = self._take_backend_turn()
            res.backend_id = self.speaking_backend
            if step.visible:
                logits, h = self.llm.step(tok, hidden=True, copy=False)
                spoken_bytes += step.visible
                res.spoken_ids.append(tok)
                hidden.append(h)
                self.turn_tokens += 1
            else:
                logits, _ = self.llm.step(tok, copy=False)
        # Listen: the first token says so. Any other unit is a speaking chunk, as in the reference, a lone
        # <|chunk_eos|> while idle included: the voice runs for it (docs/conformance.md).
        res.control = "listen" if res.tokens[0] == ids[LISTEN] else "speak"
        res.decode_tokens, res.decode_s = len(res.tokens), time.perf_counter() - t0
        res.decode_cpu_s = time.thread_time() - c0
        res.text = self.text_decoder.decode(bytes(spoken_bytes))
        if hidden:
            res.hidden = np.stack(hidden).astype(np.float32)
        return terminator

    def yield_turn(self) -> bool:
        """The user took the floor after the last unit's output: end the model's turn there.

        Called right after the unit that the barge-in was decided in, when the model went on speaking.
        That unit's output is replaced by `<|turn_eos|><|listen|>` and the unit closed again: its words
        were never played (the interrupt drops them), and this is the sequence the reference writes when
        it forces a listen on a speaking model (docs/reference.md, "Ending a turn"). Returns whether a
        turn was closed (a listening model has none to close).
        """
        if self.output_from is None:
            return False
        self.llm.truncate(self.output_from)
        self.llm.prefill_tokens([self.ids[TURN_EOS], self.ids[LISTEN], self.ids[UNIT_CLOSE]], want_logits=False)
        self.output_from = None
        self.in_turn, self.turn_tokens, self.speaking_backend = False, 0, ""
        self.cut_turn()
        self.parser.reset()  # a span still being written is void: the user interrupted it
        self.text_decoder.reset()
        self.kv.note()
        return True

    def cut_turn(self) -> None:
        """The user cut the last turn: the result it spoke may be offered again, and will be spoken again."""
        self.spoken_work.discard(self.turn_work)

    def _take_backend_turn(self) -> str:
        """A turn starts: it speaks the oldest prefilled result, if one waits."""
        self.turn_work = ""
        if not self.awaiting:
            return ""
        w = self.awaiting.popleft()
        if w.work_id:
            self.spoken_work.add(w.work_id)
            self.turn_work = w.work_id
        return w.result_id

    def _inject(self, res: ChunkResult) -> None:
        """Prefill the oldest waiting result at this idle listen boundary; the next turn speaks it.

        One per boundary, in the order the harness released them, so each turn speaks one result."""
        w = self.pending.pop(0)
        body = self.llm.tokenize(w.text, special=False)  # never special: a result cannot open a span
        self.kv.make_room(len(body) + 2 + self.s.max_speak_tokens + 8)
        self.llm.prefill_tokens([self.ids[BACKEND_OPEN], *body, self.ids[BACKEND_CLOSE]], want_logits=False)
        res.injected.append(w.result_id)
        self.awaiting.append(w)

    def state(self) -> dict:
        return {"n_past": self.llm.n_past, "in_turn": self.in_turn, "slides": self.kv.slides,
                "max_past": self.kv.max_seen, "pending": len(self.pending), "awaiting": len(self.awaiting)}

    # --- a restart (the frontend rebuilds the KV cache itself, see context_log.py) ------------------
    def export_state(self) -> dict:
        """Everything but the cache that the next chunk depends on: the turn, results, spans, the window."""
        return {"in_turn": self.in_turn, "turn_tokens": self.turn_tokens, "output_from": self.output_from,
                "pending": [dataclasses.asdict(w) for w in self.pending],
                "awaiting": [dataclasses.asdict(w) for w in self.awaiting],
                "seen_results": sorted(self.seen_results), "spoken_work": sorted(self.spoken_work),
                "turn_work": self.turn_work, "speaking_backend": self.speaking_backend,
                "parser": self.parser.get_state(), "recent": list(self.sampler.window),
                "recent_special": list(self.sampler.special_history), "typed": list(self.typed),
                "text": list(self.text_decoder.getstate()), "units": list(self.kv.units), "keep": self.kv.keep,
                "slides": self.kv.slides, "max_past": self.kv.max_seen}

    def import_state(self, st: dict) -> None:
        """The inverse of `export_state`, once the cache holds the same positions again."""
        self.in_turn, self.turn_tokens, self.output_from = st["in_turn"], st["turn_tokens"], st["output_from"]
        self.pending = [Waiting(**w) for w in st["pending"]]
        self.awaiting = collections.deque(Waiting(**w) for w in st["awaiting"])
        self.seen_results, self.spoken_work = set(st["seen_results"]), set(st["spoken_work"])
        self.turn_work, self.speaking_backend = st["turn_work"], st["speaking_backend"]
        self.parser.set_state(st["parser"])
        self.typed = list(st.get("typed", []))
        for tok in [*st.get("recent_special", []), *st["recent"]]:
            self.sampler.remember(tok)
        self.text_decoder.setstate((bytes(st["text"][0]), int(st["text"][1])))
        self.kv.units = collections.deque(st["units"])
        self.kv.keep, self.kv.slides, self.kv.max_seen = st["keep"], st["slides"], st["max_past"]
