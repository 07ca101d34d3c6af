"""The general capability: an open-ended request answered by a chat model."""
from __future__ import annotations

from typing import Any

from edge.harness.capability import Outcome, RunContext
from edge.harness.chat import ChatBackend

SYSTEM = ("You do background work for a voice assistant. Answer the request in at most three short, plain "
          "sentences that can be read aloud: no lists, no markup, no links.")


class GeneralCapability:
    name = "general"
    description = "Answers an open-ended request or question with a language model."
    instructions = "Use for anything no other capability fits. Put the full request in 'request'."
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"request": {"type": "string", "minLength": 1, "maxLength": 4000}},
        "required": ["request"],
        "additionalProperties": False,
    }

    def __init__(self, chat: ChatBackend, timeout_s: float = 30.0, max_tokens: int = 200) -> None:
        self.chat = chat
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        messages = [{"role": "system", "content": SYSTEM}]
        for instruction, result in ctx.previous:  # a continuation sees what came before
            messages += [{"role": "user", "content": instruction}, {"role": "assistant", "content": result}]
        messages.append({"role": "user", "content": arguments["request"]})
        return Outcome(self.chat.complete(messages, self.timeout_s, self.max_tokens))
