"""The 12 protocol tokens of the chunk loop and the delegation channel (docs/protocol.md), and their ids in a
model's vocabulary."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

SPEAK, LISTEN, TURN_EOS, CHUNK_EOS = "<|speak|>", "<|listen|>", "<|turn_eos|>", "<|chunk_eos|>"
UNIT_OPEN, UNIT_CLOSE, IMAGE_OPEN, IMAGE_CLOSE = "<unit>", "</unit>", "<image>", "</image>"
DELEGATE_OPEN, DELEGATE_CLOSE, BACKEND_OPEN, BACKEND_CLOSE = "<delegate>", "</delegate>", "<backend>", "</backend>"

PROTOCOL_TOKENS: tuple[str, ...] = (
    SPEAK, LISTEN, TURN_EOS, CHUNK_EOS, UNIT_OPEN, UNIT_CLOSE, IMAGE_OPEN, IMAGE_CLOSE,
    DELEGATE_OPEN, DELEGATE_CLOSE, BACKEND_OPEN, BACKEND_CLOSE,
)


class TokenMapError(ValueError):
    pass


@dataclass(frozen=True)
class TokenMap:
    """Protocol token name <-> id. Each protocol token must be exactly one vocabulary entry."""

    ids: Mapping[str, int]

    def __post_init__(self) -> None:
        missing = [t for t in PROTOCOL_TOKENS if t not in self.ids]
        if missing:
            raise TokenMapError(f"the vocabulary lacks protocol token(s) {', '.join(missing)}; "
                                "use a model exported with the delegation channel")
        if len(set(self.ids[t] for t in PROTOCOL_TOKENS)) != len(PROTOCOL_TOKENS):
            raise TokenMapError("two protocol tokens share one id; the vocabulary is not a Venus vocabulary")

    def id(self, name: str) -> int:
        return self.ids[name]

    def name(self, token_id: int) -> str | None:
        return self._by_id.get(token_id)

    @property
    def _by_id(self) -> dict[int, str]:
        cached = self.__dict__.get("_rev")
        if cached is None:
            cached = {self.ids[t]: t for t in PROTOCOL_TOKENS}
            object.__setattr__(self, "_rev", cached)
        return cached

    @classmethod
    def from_lookup(cls, lookup: Callable[[str], list[int]]) -> "TokenMap":
        """Build from a tokenizer call that returns the ids of a string with special tokens parsed."""
        ids: dict[str, int] = {}
        for t in PROTOCOL_TOKENS:
            got = lookup(t)
            if len(got) != 1:
                raise TokenMapError(f"{t} tokenizes to {len(got)} ids, not one; the model lacks the "
                                    "delegation channel's control tokens")
            ids[t] = got[0]
        return cls(ids)
