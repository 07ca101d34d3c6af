"""The general capability: an open-ended request answered by a chat model."""
from __future__ import annotations

import re
from typing import Any

from edge.harness.capability import Outcome, RunContext, one_text
from edge.harness.chat import ChatBackend
from edge.language.live_facts import cannot_know, live_topic
from edge.harness.time_elsewhere import time_elsewhere

SYSTEM = ("You are the helper of a friendly voice assistant, and your words are read aloud. Answer the request "
          "directly in at most three short, plain sentences: no lists, no markup, no links. When it asks for a "
          "story, a poem, a joke or a description, make one up and tell it in full, in up to eight sentences. "
          "Never refuse a harmless request, and never say that you are an AI or a language model.")
# The coder model's refusal and disclaimer, and its "cannot" openings: a reply that is one of them is asked again
# once with the request restated as a story to tell (the 0.5B model refuses "Find a story about ..." as a lookup).
REFUSAL = re.compile(r"^\s*(i'?m sorry|i am sorry|sorry|as an ai|i can'?t|i cannot|i am unable|i'm unable)", re.I)
_DISCLAIMER = re.compile(r"\b(as an ai|ai language model|a language model|i don'?t have (personal|feelings)|"
                         r"i do not have (personal|feelings))", re.I)


def without_disclaimer(text: str) -> str:
    """The answer without its "As an AI language model, I don't have ..." sentences (never all of it)."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    kept = [x for x in sentences if not _DISCLAIMER.search(x)]
    if not kept or len(kept) == len(sentences):
        return text
    first = re.sub(r"^(however|but|still|that said),?\s*", "", kept[0], flags=re.I)
    return " ".join([first[:1].upper() + first[1:]] + kept[1:])


class GeneralCapability:
    name = "general"
    description = "Answers an open-ended request or question with a language model."
    instructions = "Use for anything no other capability fits. Put the full request in 'request'."
    schema: dict[str, Any] = one_text("request", 4000)

    def __init__(self, chat: ChatBackend, timeout_s: float, max_tokens: int = 200) -> None:
        """`timeout_s`: the harness's for `general` (HarnessSettings.timeout_for; it has no default of its own)."""
        self.chat = chat
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        topic = None if getattr(self.chat, "live", False) else live_topic(arguments["request"])
        if topic is not None:  # a model alone would make the figures up; a skill with a live source is routed first
            return Outcome(cannot_know(topic))
        elsewhere = time_elsewhere(arguments["request"])
        if elsewhere is not None:  # the clock and the zone data know it; a model would make the time up
            return Outcome(elsewhere, ttl_s=60.0)
        messages = [{"role": "system", "content": SYSTEM}]
        for instruction, result in ctx.previous:  # a continuation sees what came before
            messages += [{"role": "user", "content": instruction}, {"role": "assistant", "content": result}]
        messages.append({"role": "user", "content": arguments["request"]})
        text = self.chat.complete(messages, self.timeout_s, self.max_tokens)
        if REFUSAL.match(text):
            messages[-1] = {"role": "user", "content": f"Answer this for a friend, in plain words: {arguments['request']}"}
            again = self.chat.complete(messages, self.timeout_s, self.max_tokens)
            text = again if not REFUSAL.match(again) else text
        return Outcome(without_disclaimer(text))
