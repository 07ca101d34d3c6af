"""Chunk streams and the per-chunk decisions a model makes on them.

A stream is what the runtime fed the frontend, chunk by chunk: the input of
each chunk (protocol tokens, text, or embedding rows from an encoder) and the
output that was recorded for it. Every precision is replayed on the same
stream with the recorded outputs forced, so all models see the same context
and only their decisions can differ. A stream may join several recorded
sessions; each starts from an empty context, as the runtime started it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from edge.backends.llama import LlamaModel
from edge.protocol.tokens import DELEGATE_OPEN, LISTEN, SPEAK, UNIT_CLOSE, UNIT_OPEN, TokenMap, TokenMapError
from quant.metrics import ChunkDecision

Segment = str | np.ndarray  # text (special tokens parsed) or embedding rows (n, n_embd)


@dataclass
class ChunkRecord:
    index: int
    inputs: list[Segment]  # prefilled in order before the decision
    output: str = ""  # recorded output, forced after the decision (special tokens parsed)
    close: str = UNIT_CLOSE  # fed after the output
    audio: np.ndarray | None = None  # the chunk's recorded 16 kHz audio, until an encoder turns it into a segment
    frame: np.ndarray | None = None  # the chunk's video frame (HxWx3 uint8), likewise
    session: int = 0  # the recorded session (journal) it came from; each session replays from an empty context


@dataclass
class ChunkStream:
    source: str  # where the stream came from, for the report
    chunks: list[ChunkRecord] = field(default_factory=list)

    def _split(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON for the text, and the embedding segments as named arrays."""
        arrays: dict[str, np.ndarray] = {}

        def seg(c: ChunkRecord, j: int, s: Segment):
            if isinstance(s, str):
                return s
            key = f"s{c.session}c{c.index}_{j}" if c.session else f"c{c.index}_{j}"
            arrays[key] = np.asarray(s, dtype=np.float32)
            return {"embeddings": key}

        def chunk(c: ChunkRecord) -> dict:
            d = {"index": c.index, "inputs": [seg(c, j, s) for j, s in enumerate(c.inputs)], "output": c.output,
                 "close": c.close}
            if c.session:  # absent for a one-session stream, whose digest stays what it was
                d["session"] = c.session
            return d

        doc = {"source": self.source, "chunks": [chunk(c) for c in self.chunks]}
        return doc, arrays

    def digest(self) -> str:
        doc, arrays = self._split()
        h = hashlib.sha256(json.dumps(doc, sort_keys=True).encode())
        for k in sorted(arrays):
            h.update(k.encode() + arrays[k].tobytes())
        return h.hexdigest()[:16]

    def save(self, path: Path) -> None:
        doc, arrays = self._split()
        path.write_text(json.dumps(doc))
        if arrays:
            np.savez(path.with_suffix(".npz"), **arrays)

    @classmethod
    def load(cls, path: Path) -> "ChunkStream":
        doc = json.loads(path.read_text())
        npz = path.with_suffix(".npz")
        arrays = dict(np.load(npz)) if npz.is_file() else {}

        def seg(s) -> Segment:
            return s if isinstance(s, str) else arrays[s["embeddings"]]

        return cls(doc["source"], [ChunkRecord(c["index"], [seg(s) for s in c["inputs"]], c["output"], c["close"],
                                               session=c.get("session", 0)) for c in doc["chunks"]])


def stream_from_text(text: str, words_per_chunk: int = 6, max_chunks: int = 24) -> ChunkStream:
    """A stand-in stream when no journal is given: the evaluation text cut into chunks, outputs not forced."""
    words = text.split()
    chunks = []
    for i in range(0, len(words), words_per_chunk):
        if len(chunks) == max_chunks:
            break
        chunks.append(ChunkRecord(len(chunks), [UNIT_OPEN + " ".join(words[i:i + words_per_chunk])]))
    return ChunkStream("evaluation text (no journal given)", chunks)


def single_id(llm: LlamaModel, text: str) -> int | None:
    """The id of a special token such as `<unit>`, or None if the vocabulary has no single entry for it."""
    ids = llm.tokenize(text, special=True)
    return ids[0] if len(ids) == 1 else None


def protocol_ids(llm: LlamaModel) -> TokenMap:
    try:
        return TokenMap.from_lookup(lambda s: llm.tokenize(s, special=True))
    except TokenMapError as e:
        raise ValueError(f"decision agreement needs the Realtime-Venus protocol tokens: {e}") from None


def replay(llm: LlamaModel, stream: ChunkStream) -> list[ChunkDecision]:
    """Prefill each chunk, read the listen/speak decision, force the recorded output, watch for `<delegate>`."""
    tokens = protocol_ids(llm)
    listen, speak, delegate = tokens.id(LISTEN), tokens.id(SPEAK), tokens.id(DELEGATE_OPEN)
    llm.clear()
    decisions = []
    session = stream.chunks[0].session if stream.chunks else 0
    for chunk in stream.chunks:
        if chunk.session != session:  # the next recorded session starts from an empty context
            llm.clear()
            session = chunk.session
        last = None
        for seg in chunk.inputs:
            if isinstance(seg, str):
                ids = llm.tokenize(seg, special=True)
                if ids:
                    last = llm.prefill_tokens(ids)
            elif len(seg):
                last = llm.prefill_embeddings(seg, want_logits=True)
        if last is None:
            raise ValueError(f"chunk {chunk.index} of {stream.source} has no input to prefill")
        margin = float(last[speak] - last[listen])
        preds = [int(np.argmax(last))]  # read before the next decode overwrites the logits
        out_ids = llm.tokenize(chunk.output, special=True) if chunk.output else []
        if out_ids:
            preds += [int(i) for i in llm.logits_all(out_ids)[:-1].argmax(axis=-1)]
        close_ids = llm.tokenize(chunk.close, special=True) if chunk.close else []
        llm.prefill_tokens(close_ids, want_logits=False)
        decisions.append(ChunkDecision("speak" if margin > 0 else "listen", delegate in preds, margin))
    return decisions


def stream_positions(tokenize: Callable[[str, bool], list[int]], stream: ChunkStream) -> int:
    """How many context positions a replay of the stream takes (its longest session: each starts afresh)."""
    per_session: dict[int, int] = {}
    for c in stream.chunks:
        n = 0
        for seg in c.inputs:
            n += len(tokenize(seg, True)) if isinstance(seg, str) else len(seg)
        n += len(tokenize(c.output, True)) if c.output else 0
        n += len(tokenize(c.close, True)) if c.close else 0
        per_session[c.session] = per_session.get(c.session, 0) + n
    return max(per_session.values(), default=0)
