"""The default frontend's settings: endpointing, drafting, decoding caps and budgets, the recogniser."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from edge.options import from_settings


@dataclass
class Settings:
    threads: int = 1
    endpoint_ms: int = 300  # silence after speech that ends the user's turn (checked at the boundary)
    question_endpoint_ms: int = 96  # ... or this much, when the words so far end in a question mark
    draft_ms: int = 32  # a pause this long at a boundary: the reply is drafted, in case the turn has ended
    draft_budget: float = 0.9  # share of a chunk a drafting step may take in all (live); the step that ends the
    # turn on the draft costs next to nothing, so it catches up
    threshold: float = 0.5  # VAD speech probability
    preroll_ms: int = 200  # audio kept before the first voiced frame
    max_turn_s: int = 25  # whisper reads 30 s at most
    delegate_bias: float = 0.4  # logit added to "<" (span or listen) at a reply's first token
    max_reply_tokens: int = 80
    max_talk_tokens: int = 320  # a story, an explanation or a description, told at length (rules.at_length)
    tokens_per_chunk: int = 20  # decode cap within one chunk (the reference caps text tokens per chunk at 20)
    first_tokens: int = 32  # the same for the reply's first piece (a delegate span comes before it)
    history_turns: int = 8  # turns of conversation in the prompt before it is trimmed ...
    keep_turns: int = 2  # ... to this many
    llm_budget: float | None = 0.6  # share of a chunk the LLM may decode in one step (live); None: no limit
    first_budget: float = 1.5  # the same for the reply's first piece
    # The user's turns are read by whisper base with beam 5: `venus-edge bench asr` measured WER 30.6 % against
    # tiny.en's 48.3 % (names 27 % against 58 %) for about 2.1 times the recognition compute (README).
    asr: str = "base"
    asr_beam: int = 5
    number_reading: bool = True  # a sum heard with a broken operand is read again, minded of numbers
    # (edge/detect/number_reading.py; the journal's `asr_reread` says what was read and why)
    # A turn whisper itself found unlikely is asked back in one short sentence, not answered (edge/detect/
    # confidence.py, edge/frontend/default/asking.py): its mean log-probability per token under `ask_back_logprob`
    # ("Sorry, I didn't catch that."; a sum the calculator works out is answered, saying the sum back), or a content
    # word's probability under `ask_back_word` ("Did you say ...?"; 0: that test off). `bench asr --confidence`
    # over 240 utterances: under -0.7 are 16 % of transcripts heard right and 55 % of those misheard (70 % of the
    # badly misheard); a word under 0.05 caught 4 more of 133 for a decoder pass a turn (docs/measurements/answers.md).
    ask_back: bool = True
    ask_back_logprob: float = -0.7
    ask_back_word: float = 0.0
    rules: bool = True  # sums, conversions and the clock go to the harness, "what did I just say" is answered
    # from the history (edge/frontend/default/rules.py): the 0.5B model gets them wrong
    context: int = 2048  # the chat model's context in tokens (the session's `context`, None: this)
    kv_type: str = "f16"  # its KV-cache type (the session's `kv_type`, None: this)
    # Another chat model in the place of Qwen2.5 0.5B (`bench chat --llm-gguf`, `bench answers --llm-gguf`)
    llm_gguf: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Settings":
        """The options from the session's flat settings, built once (edge/options.py): a session setting named
        like one of `FROM_SESSION` sets it (None or absent: the default here); a value of the wrong kind is one
        sentence."""
        s = from_settings(cls, config, "the default frontend's", FROM_SESSION)
        s.threads, s.asr_beam = max(1, s.threads), max(1, s.asr_beam)
        if config.get("realtime") is False:
            s.llm_budget = None  # a virtual clock waits for the frontend: decode the same pieces on any machine
        return s


# The session settings (SessionConfig fields or extra options) the default frontend takes, by the same name.
FROM_SESSION = ("threads", "endpoint_ms", "max_reply_tokens", "tokens_per_chunk", "asr", "asr_beam", "rules",
                "number_reading", "ask_back", "ask_back_logprob", "ask_back_word", "context", "kv_type", "llm_gguf")

