"""The embedded default's side of the chunk protocol: grammar, prompt, and reading its output.

The small LLM's output is constrained by a GBNF grammar to what the Venus
model says: `<|listen|>`, or spoken text, optionally preceded by one
`<delegate>instruction</delegate>` span for the harness. Plain text is
speech (as in the reference); the span is parsed from the constrained text
and never reaches the speech decoder.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.protocol.strip import strip_protocol_tokens
from edge.protocol.tokens import DELEGATE_CLOSE, DELEGATE_OPEN, LISTEN, TURN_EOS

OPEN, CLOSE = DELEGATE_OPEN, DELEGATE_CLOSE  # the span's tags, as the grammar writes them
MAX_INSTRUCTION = 300  # characters; the reference caps spans at 4,000, a small model needs far fewer

GRAMMAR = rf'''
root ::= listen | reply
listen ::= "{LISTEN}"
reply ::= delegate? speech
delegate ::= "{OPEN}" [^<>\n]{{4,{MAX_INSTRUCTION}}} "{CLOSE}" " "?
speech ::= [^<>\n*#`]{{1,600}}
'''

MIN_TALK, MAX_TALK = 400, 1500  # characters of a story, an explanation or a description told at length
# A request the small model answers itself at length (edge/frontend/default/rules.py, `at_length`): spoken text
# only. With the span allowed, the 0.5B model "looks up" a story instead of telling it.
TALK_GRAMMAR = rf'''
root ::= [^<>\n*#`]{{{MIN_TALK},{MAX_TALK}}}
'''

# No example answers a fact question: with "Who wrote Romeo and Juliet? William Shakespeare ..." among them, the
# 0.5B model said Shakespeare wrote Pride and Prejudice, War and Peace and the Moonlight Sonata.
SYSTEM_PROMPT = """You are a friendly voice assistant with a warm personality. You talk to a person out loud, so answer in one or two short, plain sentences, with no lists or code.
When the person asks for a story, an explanation or a description, tell it yourself at length, in eight to twelve plain sentences. You have your own tastes and opinions: when asked what you like or would do, answer as yourself. Never say that you are an AI or a language model, and never refuse a story.
You cannot see the internet, the news, the weather, or a clock. When a question needs any of these, or anything you cannot know, first write <delegate>...</delegate> holding a complete instruction for a helper, then tell the person you will check.
If the person only says a filler such as "mm-hm" or asks you to wait, write <|listen|>.
Examples:
User: What is three times three?
Assistant: Three times three is nine.
User: What's the weather like in Berlin today?
Assistant: <delegate>Find today's weather forecast for Berlin, Germany.</delegate> Let me check the weather in Berlin for you.
User: What time is it in Sydney?
Assistant: <delegate>Find the current local time in Sydney, Australia.</delegate> One moment, I'll look that up.
User: Tell me something funny.
Assistant: Why did the scarecrow win an award? Because he was outstanding in his field.
User: Describe your perfect evening.
Assistant: My perfect evening starts with a slow walk at sunset, when the sky turns pink and gold. Then I would cook a big pot of soup with friends, and we would talk and laugh until late. I would end it by the window with a hot cup of tea, watching the stars come out."""

# "As an AI language model, I don't have preferences": a voice companion never says it. The tokens of "AI" are
# kept out of every reply unless the user said the word; a reply told at length never opens with "As" or
# "Sorry" (the openings of that phrase and of a refusal), nor says "sorry" or "assist" ("I'm sorry, but I
# can't assist with that": the coder model's refusal of a story).
NEVER_SAY = ("AI", " AI", " artificial")
NEVER_OPEN = ("As", "Sorry")
NEVER_IN_TALK = (" sorry", " assist", " unable")
BANNED = -1e9


def banned_words(tokenize, said: str) -> dict[int, float]:
    """Logit biases that keep "AI" out of the reply; none when the user's own words name it."""
    if re.search(r"\b(ai|a\.i\.|artificial)\b", said, re.I):
        return {}
    return {tokenize(w)[0]: BANNED for w in NEVER_SAY}


def talk_opening(tokenize) -> dict[int, float]:
    """First-token biases of a reply told at length: it does not open as "As an AI ..." or "Sorry, ..."."""
    return {tokenize(w)[0]: BANNED for w in NEVER_OPEN}


def talk_words(tokenize, said: str) -> dict[int, float]:
    """Every-token biases of a reply told at length: no "AI", no "sorry", no "assist"."""
    return {**banned_words(tokenize, said), **{tokenize(w)[0]: BANNED for w in NEVER_IN_TALK}}


def strip_protocol(text: str) -> str:
    """Text for the prompt: protocol tokens removed (edge.protocol.strip), then every '<' and '>' left.

    The prompt is ChatML read with special tokens parsed, and the grammar never
    writes an angle bracket outside the protocol: with none in the prompt, no tag
    of the vocabulary (`<|im_end|>`, `<think>`) can be spelled by a user or a tool.
    """
    return re.sub(r"\s+", " ", strip_protocol_tokens(text).replace("<", " ").replace(">", " ")).strip()


def chat_prompt(history: list[tuple[str, str]], system: str = SYSTEM_PROMPT) -> str:
    """Qwen's ChatML prompt for the conversation so far, ending where the assistant speaks."""
    parts = [f"<|im_start|>system\n{system}<|im_end|>\n"]
    parts += [f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in history]
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


@dataclass
class Parsed:
    listen: bool = False
    instruction: str | None = None  # the delegate span's text, once it is closed
    closed_by: str = CLOSE
    speech: str = ""  # spoken text so far (never includes the span)
    undecided: bool = False  # the text so far could still become a span or a listen


def parse(text: str, finished: bool) -> Parsed:
    """Read the constrained output so far; `finished` closes an open span (as `<|turn_eos|>` does)."""
    if text.startswith(LISTEN):
        return Parsed(listen=True)
    if not text.startswith("<"):
        return Parsed(speech=text)
    if not text.startswith(OPEN):
        return Parsed(undecided=not finished, listen=finished and LISTEN.startswith(text))
    body = text[len(OPEN):]
    end = body.find(CLOSE)
    if end >= 0:
        return Parsed(instruction=body[:end].strip(), speech=body[end + len(CLOSE):].lstrip())
    if finished:
        # A partial closing tag at the cap is not part of the instruction.
        for k in range(len(CLOSE) - 1, 0, -1):
            if body.endswith(CLOSE[:k]):
                body = body[:-k]
                break
        return Parsed(instruction=body.strip(), closed_by=TURN_EOS)
    return Parsed(undecided=True)


_SENTENCE_END = re.compile(r"[.!?;:](?=\s)")


def sentence_end(speech: str, start: int, finished: bool) -> int | None:
    """End of the first whole sentence after `start`, or None while it is still being written."""
    m = _SENTENCE_END.search(speech, start)
    if m is not None:
        return m.end()
    return len(speech) if finished and speech[start:].strip() else None
