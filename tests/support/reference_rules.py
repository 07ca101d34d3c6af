"""The reference's duplex context, built position by position from its rules (docs/reference.md, "Chunks and the
unit layout", "Decoding", "Ending a turn", "Backend results"), to check the chunk loop's context against.

Given what a session did (the frames and audio of each chunk, the tokens the model drew, a forced listen, a
result prefilled), this replays the reference's prepare / streaming_prefill / streaming_generate /
finalize_unit / append_prefill as their rules say, and lists what enters the context: a token id, "audio" for
one audio embedding, "slice" for one vision embedding. Nothing here reads the runtime's code.
"""
from __future__ import annotations

from typing import Callable

SYSTEM_PROMPT = "Streaming Omni Conversation."  # the deployed prefix, tokenized as given, fed once
CHUNK_CAP = 20  # max_new_speak_tokens_per_chunk: the last place is <|chunk_eos|>, never drawn
AUDIO_PER_SECOND = 10  # 50 mel frames a second pooled by 5
SLICE_ROWS = 64  # the resampler's queries per image or slice
TERMINATORS = ("<|listen|>", "<|chunk_eos|>", "<|chunk_tts_eos|>")  # they end a unit and wait for </unit>


class ReferenceContext:
    def __init__(self, special: Callable[[str], int | None], text: Callable[[str], list[int]]) -> None:
        self.id = special
        self.seq: list[int | str] = list(text(SYSTEM_PROMPT))
        self.turn_ended = True  # nothing said yet
        self.pending: int | None = None
        self.terminators = {i for i in (special(t) for t in TERMINATORS) if i is not None}

    def prefill(self, frames: list[int], audio_seconds: float) -> None:
        """streaming_prefill: <unit>; per frame its source view in <image>, each further slice in <slice>; then
        the chunk's audio embeddings."""
        t = self.id
        self.seq.append(t("<unit>"))
        for slices in frames:
            self.seq += [t("<image>"), *["slice"] * SLICE_ROWS, t("</image>")]
            for _ in range(slices - 1):
                self.seq += [t("<slice>"), *["slice"] * SLICE_ROWS, t("</slice>")]
        self.seq += ["audio"] * round(AUDIO_PER_SECOND * audio_seconds)

    def typed(self, body: list[int]) -> None:
        """streaming_prefill's text list: the typed text's plain tokens, in the unit after its media (where in
        the unit is the checkpoint's unpublished code; this is the order the runners hand the parts over)."""
        self.seq += body

    def generate(self, draws: list[int]) -> None:
        """streaming_generate over the model's draws: the cap's last place is <|chunk_eos|>; a terminator ends
        the unit unfed; a listen drawn while a turn is open becomes <|tts_bos|>; every other token is fed."""
        t = self.id
        self.pending = None
        for j in range(CHUNK_CAP):
            if j == CHUNK_CAP - 1:
                self.pending = t("<|chunk_eos|>")
                return
            tok = draws[j]
            if tok == t("<|listen|>") and not self.turn_ended:
                tok = t("<|tts_bos|>")
            if tok in self.terminators:
                self.pending = tok
                return
            self.seq.append(tok)
            self.turn_ended = tok == t("<|turn_eos|>")

    def forced_listen(self) -> None:
        """force_listen_override: a speaking turn is closed with <|turn_eos|>, then listen ends the unit."""
        if not self.turn_ended:
            self.seq.append(self.id("<|turn_eos|>"))
            self.turn_ended = True
        self.pending = self.id("<|listen|>")

    def finalize(self) -> None:
        """finalize_unit: the pending terminator and </unit>, together."""
        self.seq += ([self.pending] if self.pending is not None else []) + [self.id("</unit>")]
        self.pending = None

    def backend(self, body: list[int]) -> None:
        """append_prefill at a listen boundary: the result wrapped in <backend> … </backend>."""
        self.seq += [self.id("<backend>"), *body, self.id("</backend>")]
