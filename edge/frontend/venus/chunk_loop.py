"""The chunk protocol of REFERENCE.md on llama.cpp, token by token.

Per chunk: prefill `<unit>`, then (Omni) `<image>` + 64 embeddings per slice +
`</image>`, then the chunk's audio embeddings; decode `<|listen|>` (silent this
chunk), or `<|speak|>`/text up to the per-chunk cap, ended by `<|chunk_eos|>`
(forced at the cap) or `<|turn_eos|>`; then prefill `</unit>`. Listen is masked
while a turn is open. Delegate spans are read from token ids; spoken tokens keep
their hidden states for the TTS. At an idle listen boundary, queued harness
results are prefilled as `<backend>text</backend>`. When the user barges in and
the model went on speaking, `yield_turn` closes its turn the way the protocol
does (see there).
"""
from __future__ import annotations

import codecs
import collections
import re
import time
from dataclasses import dataclass, field

import numpy as np

from edge.protocol.spans import DelegateParser, Span
from edge.protocol.strip import strip_protocol_tokens
from edge.protocol.tokens import (BACKEND_CLOSE, BACKEND_OPEN, CHUNK_EOS, IMAGE_CLOSE, IMAGE_OPEN, LISTEN,
                                 PROTOCOL_TOKENS, SPEAK, TURN_EOS, UNIT_CLOSE, UNIT_OPEN, TokenMap, TokenMapError)
from edge.backends.gguf_rows import token_rows
from edge.frontend.venus.kv_window import KVWindow
from edge.backends.llama import LlamaModel
from edge.backends.sampling import FORCE_BIAS, ChainSampler
from edge.bundle.settings import VenusSettings

INPUT_ONLY = (UNIT_OPEN, UNIT_CLOSE, IMAGE_OPEN, IMAGE_CLOSE, BACKEND_OPEN, BACKEND_CLOSE)


@dataclass
class ChunkResult:
    control: str  # "listen" | "speak"
    text: str = ""
    tokens: list[int] = field(default_factory=list)  # every decoded token id of the chunk
    spoken_ids: list[int] = field(default_factory=list)  # the visible tokens, in order
    hidden: np.ndarray | None = None  # (len(spoken_ids), n_embd) hidden states of the spoken tokens
    spans: list[Span] = field(default_factory=list)
    voided: list[str] = field(default_factory=list)
    turn_end: bool = False
    backend_id: str = ""  # the harness result these words speak
    injected: list[str] = field(default_factory=list)  # result ids prefilled after this chunk
    refused: list[str] = field(default_factory=list)  # forced items the protocol rules did not allow
    prefill_tokens: int = 0
    prefill_s: float = 0.0
    decode_tokens: int = 0
    decode_s: float = 0.0


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


class ChunkLoop:
    def __init__(self, llm: LlamaModel, settings: VenusSettings) -> None:
        self.llm, self.s = llm, settings
        self.tok = protocol_tokens(llm)
        t = self.tok.id
        self.ids = {name: t(name) for name in PROTOCOL_TOKENS}
        self.sampler = ChainSampler(settings.sampling, t(LISTEN), t(TURN_EOS))
        self.parser = DelegateParser(self.tok, llm.piece)
        self.kv = KVWindow(llm, settings.kv_high, settings.kv_low)
        base = [t(n) for n in INPUT_ONLY]
        # Masks by position in the chunk: later tokens never listen or speak; listen is not allowed mid-turn.
        self.mask_later = np.array(base + [t(LISTEN), t(SPEAK)], np.int64)
        self.mask_first_in_turn = np.array(base + [t(LISTEN)], np.int64)
        self.mask_first = np.array(base, np.int64)
        self.in_turn = False
        self.turn_tokens = 0
        self.output_from: int | None = None  # KV position where the last unit's output starts, while it spoke
        self.pending: list[tuple[str, str]] = []  # (result id, text) waiting for an idle boundary
        self.seen_results: set[str] = set()
        self.speaking_backend = ""
        self.next_backend = ""  # the result prefilled last; the next turn speaks it
        self.text_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        # Protocol-token rows of the embedding table: a chunk's whole prefill becomes one embedding batch.
        rows = token_rows(llm.path, [t(n) for n in PROTOCOL_TOKENS]) if settings.single_batch_prefill else None
        self.rows = None if rows is None or rows.shape[1] != llm.n_embd else {
            n: rows[i] for i, n in enumerate(PROTOCOL_TOKENS)}
        if settings.system_prompt:
            llm.prefill_tokens(llm.tokenize(settings.system_prompt, special=True), want_logits=False)
        self.kv.keep = llm.n_past

    # --- results from the harness ----------------------------------------------------------------
    def deliver(self, result_id: str, text: str) -> bool:
        if result_id in self.seen_results:
            return False  # a repeated result id is ignored
        self.seen_results.add(result_id)
        clean = cap_sentences(strip_protocol_tokens(text), self.s.backend_max_sentences, self.s.backend_max_chars)
        if clean:
            self.pending.append((result_id, clean))
        return bool(clean)

    # --- forcing (test-only) -------------------------------------------------------------------
    def _forced(self, index: int) -> list[int]:
        out: list[int] = []
        items = self.s.forced.get(index)
        if items is None:
            after = self.next_backend and not self.in_turn and self.s.forced_after_backend
            items = self.s.forced_after_backend if after else self.s.forced.get(-1, [])
        for item in items:
            out += [self.ids[item]] if item in self.ids else self.llm.tokenize(item, special=False)
        return out

    # --- one chunk -----------------------------------------------------------------------------
    def run(self, index: int, t_ns: int, media: list[tuple[str, np.ndarray]]) -> ChunkResult:
        """`media`: ("image", (n, d)) and ("audio", (n, d)) embedding sections in order."""
        res = ChunkResult("listen")
        need = 4 + sum(len(e) + (2 if kind == "image" else 0) for kind, e in media) + self.s.max_speak_tokens + 4
        self.kv.make_room(need)
        self.kv.unit_start()
        t0 = time.perf_counter()
        n0 = self.llm.n_past
        logits = self._prefill(media)
        res.prefill_tokens, res.prefill_s = self.llm.n_past - n0, time.perf_counter() - t0
        output_from = self.llm.n_past
        self._decode(index, t_ns, logits, res)
        self.llm.prefill_tokens([self.ids[UNIT_CLOSE]], want_logits=False)
        self.output_from = output_from if res.control == "speak" else None
        if res.control == "listen" and not self.in_turn and self.pending:
            self._inject(res)
        self.kv.note()
        return res

    def _prefill(self, media: list[tuple[str, np.ndarray]]) -> np.ndarray:
        """`<unit>` [`<image>` slices `</image>`] audio: one embedding batch when the rows are known."""
        if self.rows is not None:
            r = self.rows
            parts = [r[UNIT_OPEN][None]]
            for kind, emb in media:
                parts += [r[IMAGE_OPEN][None], emb, r[IMAGE_CLOSE][None]] if kind == "image" else [emb]
            return self.llm.prefill_embeddings(np.concatenate(parts).astype(np.float32), want_logits=True)
        logits = self.llm.prefill_tokens([self.ids[UNIT_OPEN]], want_logits=not media)
        for i, (kind, emb) in enumerate(media):
            last = i == len(media) - 1
            if kind == "image":
                self.llm.prefill_tokens([self.ids[IMAGE_OPEN]], want_logits=False)
                self.llm.prefill_embeddings(emb)
                logits = self.llm.prefill_tokens([self.ids[IMAGE_CLOSE]], want_logits=last)
            else:
                logits = self.llm.prefill_embeddings(emb, want_logits=last)
        assert logits is not None
        return logits

    def _decode(self, index: int, t_ns: int, logits: np.ndarray, res: ChunkResult) -> None:
        ids = self.ids
        forced = self._forced(index)
        spoken_bytes = bytearray()
        hidden: list[np.ndarray] = []
        first, n_text = True, 0
        t0 = time.perf_counter()
        ctx = self.llm.ctx
        while True:
            mask = self.mask_later if not first else self.mask_first_in_turn if self.in_turn else self.mask_first
            bias = {}
            if n_text >= self.s.max_speak_tokens:
                bias = {ids[CHUNK_EOS]: FORCE_BIAS}  # the cap forces the chunk's end
            elif forced:
                if forced[0] in mask:
                    res.refused.append(self.tok.name(forced[0]) or str(forced[0]))
                    forced.pop(0)
                    continue
                bias = {forced[0]: FORCE_BIAS}
            tok = self.sampler.sample(ctx, logits, mask, bias, self.turn_tokens)
            if forced and tok == forced[0]:
                forced.pop(0)
            res.tokens.append(tok)
            self.sampler.remember(tok)
            first_token, first = first, False
            if tok == ids[LISTEN] and first_token:
                self.llm.step(tok, copy=False)
                res.control = "listen"
                break
            res.control = "speak"
            if not self.in_turn:
                self.in_turn, self.turn_tokens = True, 0
                self.speaking_backend = self._take_backend_turn()
            res.backend_id = self.speaking_backend
            if tok == ids[SPEAK]:
                logits, _ = self.llm.step(tok, copy=False)
                continue
            step = self.parser.feed(tok, t_ns)
            if step.span:
                res.spans.append(step.span)
            if step.voided:
                res.voided.append(step.voided)
            if tok in (ids[CHUNK_EOS], ids[TURN_EOS]):
                self.llm.step(tok, copy=False)
                if tok == ids[TURN_EOS]:
                    res.turn_end, self.in_turn = True, False
                    self.speaking_backend = ""
                break
            if step.visible:
                logits, h = self.llm.step(tok, hidden=True, copy=False)
                spoken_bytes += step.visible
                res.spoken_ids.append(tok)
                hidden.append(h)
                self.turn_tokens += 1
            else:
                logits, _ = self.llm.step(tok, copy=False)
            n_text += 1
        res.decode_tokens, res.decode_s = len(res.tokens), time.perf_counter() - t0
        res.text = self.text_decoder.decode(bytes(spoken_bytes))
        if hidden:
            res.hidden = np.stack(hidden).astype(np.float32)

    def yield_turn(self) -> bool:
        """The user took the floor after the last unit's output: end the model's turn there.

        Called right after the unit that the barge-in was decided in, when the model went on speaking.
        That unit's output is replaced by `<|turn_eos|>` and the unit closed again: its words were
        never played (the interrupt drops them), and a unit that holds the user's speech and ends in
        `<|turn_eos|>` without a word is exactly what the model writes when it yields to a user talking
        over it, so the cache reads as if it had. Not `<|listen|>`: listen is only allowed once a turn
        has ended, so it cannot be what closes one. Returns whether a turn was closed (a listening
        model has none to close).
        """
        if self.output_from is None:
            return False
        self.llm.truncate(self.output_from)
        self.llm.prefill_tokens([self.ids[TURN_EOS], self.ids[UNIT_CLOSE]], want_logits=False)
        self.output_from = None
        self.in_turn, self.turn_tokens, self.speaking_backend = False, 0, ""
        self.parser.reset()  # a span still being written is void: the user interrupted it
        self.text_decoder.reset()
        self.kv.note()
        return True

    def _take_backend_turn(self) -> str:
        taken, self.next_backend = self.next_backend, ""
        return taken

    def _inject(self, res: ChunkResult) -> None:
        """Prefill queued harness results at this idle listen boundary; the next turn speaks them."""
        for result_id, text in self.pending:
            body = self.llm.tokenize(text, special=False)  # never special: a result cannot open a span
            need = len(body) + 2
            self.kv.make_room(need + self.s.max_speak_tokens + 8)
            self.llm.prefill_tokens([self.ids[BACKEND_OPEN], *body, self.ids[BACKEND_CLOSE]], want_logits=False)
            res.injected.append(result_id)
            self.next_backend = result_id
        self.pending.clear()

    def state(self) -> dict:
        return {"n_past": self.llm.n_past, "in_turn": self.in_turn, "slides": self.kv.slides,
                "max_past": self.kv.max_seen, "pending": len(self.pending)}

    # --- a restart (the frontend rebuilds the KV cache itself, see context_log.py) ------------------
    def export_state(self) -> dict:
        """Everything but the cache that the next chunk depends on: the turn, results, spans, the window."""
        return {"in_turn": self.in_turn, "turn_tokens": self.turn_tokens, "output_from": self.output_from,
                "pending": [list(p) for p in self.pending], "seen_results": sorted(self.seen_results),
                "speaking_backend": self.speaking_backend, "next_backend": self.next_backend,
                "parser": self.parser.get_state(), "recent": list(self.sampler.window),
                "text": list(self.text_decoder.getstate()), "units": list(self.kv.units), "keep": self.kv.keep,
                "slides": self.kv.slides, "max_past": self.kv.max_seen}

    def import_state(self, st: dict) -> None:
        """The inverse of `export_state`, once the cache holds the same positions again."""
        self.in_turn, self.turn_tokens, self.output_from = st["in_turn"], st["turn_tokens"], st["output_from"]
        self.pending = [(rid, text) for rid, text in st["pending"]]
        self.seen_results = set(st["seen_results"])
        self.speaking_backend, self.next_backend = st["speaking_backend"], st["next_backend"]
        self.parser.set_state(st["parser"])
        for tok in st["recent"]:
            self.sampler.remember(tok)
        self.text_decoder.setstate((bytes(st["text"][0]), int(st["text"][1])))
        self.kv.units = collections.deque(st["units"])
        self.kv.keep, self.kv.slides, self.kv.max_seen = st["keep"], st["slides"], st["max_past"]
