"""The default frontend's conversation: the history in the prompt, and the chat model's cache kept warm on it.

A user's turn joins the history (trimmed in one go when it grows long), the reply's prompt is cut to fit the
context, the words heard so far and the history up to the next turn are prefilled while nobody waits, and a
finished reply is kept in the history as the model should see it.
"""
from __future__ import annotations

import re
import time
from typing import Any

from edge.frontend.base import ChunkOutput
from edge.frontend.default import grammar as protocol
from edge.frontend.default.camera import camera_line
from edge.frontend.default.reply import FixedStream
from edge.frontend.default.rules import at_length

HISTORY_CHARS = 320  # of one reply, in the history the model sees


class Conversation:
    """The history and the model's cache (a mixin: the state is the frontend's own)."""

    def _with_user(self, text: str) -> list[tuple[str, str]]:
        """The history with the user's new turn added (and trimmed when it has grown long)."""
        history = [*self.history, ("user", camera_line(self.scene) + protocol.strip_protocol(text))]
        if len(history) > 2 * self.s.history_turns:
            # Trim in one go, not a turn at a time: each trim changes the prompt's start, so the whole
            # history must be prefilled again; doing it rarely keeps turns cheap.
            history = history[-2 * self.s.keep_turns - 1:]
        return history

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

    def _prefill_partial(self, text: str, out: ChunkOutput) -> None:
        """The user is still talking: prefill the words heard so far, so the final prompt shares that prefix.

        The last word may still change (it may be cut mid-word), so it is left out.
        """
        words = protocol.strip_protocol(text).split()[:-1]
        if not words or self.reply is not None:  # never touch the cache under a reply being decoded
            return
        t0 = time.perf_counter()
        stem = protocol.chat_prompt(self.history).rsplit("<|im_start|>", 1)[0]
        self.llm.prefill(self.llm.tokenize(f"{stem}<|im_start|>user\n{camera_line(self.scene)}{' '.join(words)}"))
        self.warm = False  # the cache now ends inside a user turn
        out.info["partial_prefill_ms"] = round((time.perf_counter() - t0) * 1e3, 1)

    def _warm_up(self) -> None:
        """Prefill the conversation up to where the next user turn starts, while nobody waits for it.

        When the next turn would trim the history (`_with_user`), it is trimmed here, the same way: the prompt's
        new start is prefilled now, not at the end of that turn (about 50 tokens, a second of one core)."""
        if len(self.history) + 1 > 2 * self.s.history_turns:
            self.history = self.history[-2 * self.s.keep_turns:]
        stem = protocol.chat_prompt(self.history).rsplit("<|im_start|>", 1)[0] + "<|im_start|>user\n"
        self.llm.prefill(self.llm.tokenize(stem))
        self.warm = True

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
