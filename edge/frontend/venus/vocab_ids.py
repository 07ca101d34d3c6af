"""Vocabulary ids the chunk loop needs beyond the protocol tokens: single CONTROL tokens, and what the reference's
sampler reads (docs/reference.md, "Decoding"): the control tokens that keep their own history, the forbidden ids."""
from __future__ import annotations

from edge.backends.duplex_sampler import DuplexIds
from edge.backends.llama import LlamaModel
from edge.protocol.tokens import CHUNK_EOS, LISTEN, TURN_EOS

CHUNK_TTS_EOS, TTS_PAD = "<|chunk_tts_eos|>", "<|tts_pad|>"
SLICE_OPEN, SLICE_CLOSE = "<slice>", "</slice>"
# MiniCPM-o's own control tokens: drawn, they keep the special history, as the protocol tokens do.
OTHER_SPECIALS = (SLICE_OPEN, SLICE_CLOSE, CHUNK_TTS_EOS, TTS_PAD, "<|tts_bos|>", "<|tts_eos|>",
                  "<|audio_start|>", "<|audio_end|>")


def control_token(llm: LlamaModel, text: str) -> int | None:
    """The id of a single CONTROL token, or None when the vocabulary has no such token."""
    ids = llm.tokenize(text, special=True)
    return ids[0] if len(ids) == 1 and not llm.piece(ids[0]) else None


def unusable_ids(llm: LlamaModel) -> list[int]:
    """Vocabulary entries typed UNUSED (padding rows of the embedding table): never drawn."""
    ll = getattr(llm, "ll", None)
    if ll is None or not hasattr(ll, "llama_vocab_get_attr"):
        return []
    unused = int(ll.LLAMA_TOKEN_ATTR_UNUSED)
    return [i for i in range(llm.n_vocab) if int(ll.llama_vocab_get_attr(llm.vocab, i)) & unused]


def sampler_ids(llm: LlamaModel, protocol: dict[str, int]) -> DuplexIds:
    """The ids the reference's sampler needs: listen, the turn and chunk ends, the control tokens (their own
    history) and the forbidden ids (<|tts_pad|> and the unusable ids; <|chunk_eos|> is added by the sampler)."""
    others = {name: control_token(llm, name) for name in OTHER_SPECIALS}
    special = frozenset(protocol.values()) | frozenset(i for i in others.values() if i is not None)
    forbidden = ([others[TTS_PAD]] if others[TTS_PAD] is not None else []) + unusable_ids(llm)
    return DuplexIds(protocol[LISTEN], protocol[TURN_EOS], protocol[CHUNK_EOS], special, tuple(forbidden))
