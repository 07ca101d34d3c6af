"""A session as the LLM sees it: the token and media layout the runtime's chunk loop prefills, token for token.

Per chunk (edge/frontend/venus/chunk_loop.py): `<unit>`, then for Omni
`<image>` + 64 embeddings per slice + `</image>`, then the chunk's audio
embeddings; then the decoded tokens, each fed back: `<|listen|>`, or
`<|speak|>`, words, a delegate span and `<|chunk_eos|>`; a turn ends with
`<|turn_eos|>` and the unit's terminator `<|listen|>` after it (a barge-in:
`<|turn_eos|><|listen|>` alone). Then `</unit>`; after a listen chunk outside
a turn, a queued result as `<backend>text</backend>`. A chunk's output fits
the runtime's per-chunk cap, or the runtime would cut it with `<|chunk_eos|>`. The system prompt, when set, comes first. Media
positions hold placeholders; the model fills them with encoder outputs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edge.bundle.settings import VenusSettings
from edge.protocol.strip import strip_protocol_tokens
from edge.protocol.tokens import (BACKEND_CLOSE, BACKEND_OPEN, CHUNK_EOS, DELEGATE_CLOSE, DELEGATE_OPEN,
                                 IMAGE_CLOSE, IMAGE_OPEN, LISTEN, PROTOCOL_TOKENS, SPEAK, TURN_EOS, UNIT_CLOSE,
                                 UNIT_OPEN)
from export.errors import ExportError
from export.train.session import ChunkPlan

AUDIO, IMAGE = -1, -2  # placeholders in Layout.ids
IGNORE = -100
MAX_SPEAK_TOKENS = VenusSettings().max_speak_tokens  # the runtime's per-chunk output cap
QUERIES = 64  # resampler queries: embeddings per image slice
# What a target position decides (Layout.kinds), for per-kind accuracy.
KINDS = ("", "listen", "start", "continue", "yield", "answer", "word")


class Tokens:
    """The checkpoint's tokenizer (tokenizer.json) and its protocol token ids."""

    def __init__(self, checkpoint: Path) -> None:
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
        added = json.loads((checkpoint / "added_tokens.json").read_text())
        missing = [t for t in PROTOCOL_TOKENS if t not in added]
        if missing:
            raise ExportError(f"The tokenizer lacks protocol token(s) {', '.join(missing)}; "
                              "train from a checkpoint written by `venus-export tiny`.")
        self.id = {t: int(added[t]) for t in PROTOCOL_TOKENS}

    def text(self, s: str) -> list[int]:
        """Plain text, special tokens not parsed (as the runtime tokenizes words and results)."""
        return [i for i in self.tok.encode(s, add_special_tokens=False).ids] if s else []

    def with_specials(self, s: str) -> list[int]:
        return self.tok.encode(s, add_special_tokens=False).ids if s else []

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)


def decoded_tokens(plan: ChunkPlan, tok: Tokens, first_in_turn: bool, cap: int = MAX_SPEAK_TOKENS) -> list[int]:
    """The tokens the model should decode in one chunk, its terminator (`<|listen|>` / `<|chunk_eos|>`) last."""
    t = tok.id
    if plan.action == "listen":
        return [t[LISTEN]]
    if plan.action == "yield":
        return [t[TURN_EOS], t[LISTEN]]
    out = [t[SPEAK]]
    if plan.delegate:
        out += [t[DELEGATE_OPEN], *tok.text(plan.delegate), t[DELEGATE_CLOSE]]
    if plan.text:
        out += tok.text(plan.text if first_in_turn or plan.delegate else " " + plan.text)
    out += [t[TURN_EOS], t[LISTEN]] if plan.end_turn else [t[CHUNK_EOS]]
    # The runtime samples at most cap - 1 tokens and then appends <|chunk_eos|> (chunk_loop.py, "the cap").
    if len(out) > cap or (len(out) == cap and out[-1] != t[CHUNK_EOS]):
        raise ExportError(f"Chunk {plan.index} plans {len(out)} output tokens, more than the runtime's cap of {cap} "
                          "per chunk allows; shorten its text in export/train/script.py.")
    return out


def backend_tokens(text: str, tok: Tokens) -> list[int]:
    return [tok.id[BACKEND_OPEN], *tok.text(strip_protocol_tokens(text).strip()), tok.id[BACKEND_CLOSE]]


@dataclass
class Layout:
    ids: np.ndarray  # (L,) token ids; AUDIO / IMAGE at media positions
    targets: np.ndarray  # (L,) the decoded token expected after position p, IGNORE elsewhere
    weights: np.ndarray  # (L,) loss weight per target
    kinds: np.ndarray  # (L,) index into KINDS
    audio_pos: np.ndarray  # (chunks, audio_per_chunk) positions of each chunk's audio embeddings
    image_pos: list[tuple[int, np.ndarray]]  # (chunk, positions of its 64 * slices image embeddings)
    decoded: list[list[int]]  # per chunk, the decoded tokens


def build_layout(plan: list[ChunkPlan], tok: Tokens, system_ids: list[int], audio_per_chunk: int,
                 image_views: list[int], decision_weight: float = 3.0, answer_weight: float = 3.0) -> Layout:
    """`image_views[k]`: slices of chunk k's frame (0: no frame). `decision_weight`: the loss weight of a turn's
    or a yield's first token; `answer_weight`: of a turn's second token (which answer)."""
    t = tok.id
    ids: list[int] = list(system_ids)
    targets: list[int] = [IGNORE] * len(ids)
    weights: list[float] = [0.0] * len(ids)
    kinds: list[int] = [0] * len(ids)
    audio_pos, image_pos, decoded = [], [], []
    in_turn = False

    def put(token: int, n: int = 1) -> int:
        start = len(ids)
        ids.extend([token] * n)
        targets.extend([IGNORE] * n)
        weights.extend([0.0] * n)
        kinds.extend([0] * n)
        return start

    for k, p in enumerate(plan):
        put(t[UNIT_OPEN])
        if image_views and image_views[k]:
            put(t[IMAGE_OPEN])
            start = put(IMAGE, QUERIES * image_views[k])
            image_pos.append((k, np.arange(start, start + QUERIES * image_views[k])))
            put(t[IMAGE_CLOSE])
        start = put(AUDIO, audio_per_chunk)
        audio_pos.append(np.arange(start, start + audio_per_chunk))
        out = decoded_tokens(p, tok, first_in_turn=not in_turn)
        decoded.append(out)
        for i, token in enumerate(out):
            targets[-1] = token  # predicted from the position before it
            # The first token decides listen / speak / yield, the second which answer: the rare decisions weigh
            # more than the words that follow them.
            weights[-1] = (decision_weight if i == 0 and token != t[LISTEN] else
                           answer_weight if i == 1 and not in_turn else 1.0)
            kinds[-1] = KINDS.index(("listen" if token == t[LISTEN] else "yield" if p.action == "yield"
                                     else "continue" if in_turn else "start") if i == 0
                                    else "answer" if i == 1 and not in_turn else "word")
            put(token)
        if p.action != "listen":
            in_turn = not p.end_turn
        put(t[UNIT_CLOSE])
        if p.inject:
            for token in backend_tokens(p.inject, tok):
                put(token)
    return Layout(np.array(ids, np.int64), np.array(targets, np.int64), np.array(weights, np.float32),
                  np.array(kinds, np.int8),
                  np.stack(audio_pos) if audio_pos else np.zeros((0, audio_per_chunk), np.int64), image_pos, decoded)
