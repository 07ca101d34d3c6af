"""The decision LLM: Qwen2.5 0.5B in llama.cpp, decoding under the protocol grammar.

Sampling is greedy with a repetition penalty. The grammar is checked
against the best candidates first and against the whole vocabulary only
when none of them fits: checking 150k tokens per step costs more than the
model itself on one core. The conversation's prompt prefix stays in the KV
cache, so a new turn prefills only its new tokens.
"""
from __future__ import annotations

import codecs
import ctypes
import time
from pathlib import Path

import numpy as np

from edge.backends.locate import ModelMissing

TOP_K = 40
REPEAT_WINDOW = 64
REPEAT_PENALTY = 1.15
_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])


def _llama():
    try:
        import llama_cpp
    except ImportError:
        raise ModelMissing("llama-cpp-python is not installed; install it with `bash scripts/setup.sh` "
                           "(a portable build) or `pip install llama-cpp-python`") from None
    return llama_cpp


class DecisionModel:
    def __init__(self, path: Path, threads: int = 1, n_ctx: int = 2048, kv_type: str = "f16") -> None:
        from edge.backends.llama import kv_ggml_type

        llama_cpp = _llama()
        self._c = llama_cpp
        kv = kv_ggml_type(llama_cpp, kv_type)
        # a quantized V cache needs flash attention in llama.cpp
        self.llm = llama_cpp.Llama(str(path), n_ctx=n_ctx, n_batch=512, n_threads=threads,
                                   n_threads_batch=threads, verbose=False, type_k=kv, type_v=kv,
                                   flash_attn=kv_type != "f16")
        self.kv_type = kv_type
        self.n_vocab = self.llm.n_vocab()
        self.vocab = self.llm._model.vocab
        self._full = (llama_cpp.llama_token_data * self.n_vocab)()
        self._full_np = np.frombuffer(self._full, dtype=_TOKEN_DATA)
        self._full_np["id"] = np.arange(self.n_vocab, dtype=np.int32)
        self._top = (llama_cpp.llama_token_data * TOP_K)()
        self._top_np = np.frombuffer(self._top, dtype=_TOKEN_DATA)

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=False, special=True)

    def prefill(self, tokens: list[int]) -> int:
        """Bring the KV cache to `tokens`, reusing the longest cached prefix; returns tokens evaluated."""
        cached = self.llm.input_ids[:self.llm.n_tokens].tolist()
        keep = 0
        for a, b in zip(cached, tokens):
            if a != b:
                break
            keep += 1
        keep = min(keep, len(tokens) - 1)  # evaluate at least one token: its logits start the reply
        self.llm.n_tokens = keep
        self.llm.eval(tokens[keep:])
        return len(tokens) - keep

    def _logits(self) -> np.ndarray:
        ptr = self._c.llama_get_logits_ith(self.llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    def _apply(self, sampler, buf, arr_np: np.ndarray) -> None:
        c = self._c
        arr = c.llama_token_data_array(ctypes.cast(buf, c.llama_token_data_p), len(arr_np), -1, False)
        c.llama_sampler_apply(sampler, ctypes.byref(arr))

    def _choose(self, logits: np.ndarray, sampler, recent: list[int]) -> int:
        if recent:
            ids = np.unique(np.asarray(recent, np.int64))
            vals = logits[ids]
            logits[ids] = np.where(vals > 0, vals / REPEAT_PENALTY, vals * REPEAT_PENALTY)
        if sampler is None:
            return int(np.argmax(logits))
        top = np.argpartition(-logits, TOP_K)[:TOP_K]
        top = top[np.argsort(-logits[top])]
        self._top_np["id"], self._top_np["logit"], self._top_np["p"] = top, logits[top], 0.0
        self._apply(sampler, self._top, self._top_np)
        ok = np.isfinite(self._top_np["logit"])
        if ok.any():
            return int(self._top_np["id"][np.argmax(ok)])  # best-first order: the first one allowed
        self._full_np["logit"], self._full_np["p"] = logits, 0.0
        self._full_np["id"] = np.arange(self.n_vocab, dtype=np.int32)
        self._apply(sampler, self._full, self._full_np)
        return int(self._full_np["id"][np.argmax(self._full_np["logit"])])

    def stream(self, tokens: list[int], grammar: str | None, max_tokens: int,
               first_bias: dict[int, float] | None = None, bias: dict[int, float] | None = None) -> "TokenStream":
        return TokenStream(self, tokens, grammar, max_tokens, first_bias, bias)

    def close(self) -> None:
        self.llm.close()


class TokenStream:
    """One reply, decoded a token at a time on demand (the chunk loop pulls it across chunks)."""

    def __init__(self, model: DecisionModel, prompt: list[int], grammar: str | None, max_tokens: int,
                 first_bias: dict[int, float] | None = None, bias: dict[int, float] | None = None) -> None:
        self.model = model
        c = model._c
        t0 = time.perf_counter()
        self.prefilled = model.prefill(prompt)
        self.prefill_s = time.perf_counter() - t0
        self.sampler = c.llama_sampler_init_grammar(model.vocab, grammar.encode(), b"root") if grammar else None
        if grammar and not self.sampler:
            raise ValueError("the protocol grammar did not parse")
        self.max_tokens = max_tokens
        self.first_bias = first_bias or {}  # added to the first token's logits (a decision's prior)
        self.bias = bias or {}  # added to every token's logits (words a reply must not use)
        self.tokens: list[int] = []
        self.text = ""
        self.finished = False
        self.decode_s = 0.0
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def next(self) -> str:
        """Decode one more token; returns its text ('' at the end, then `finished` is set)."""
        if self.finished:
            return ""
        t0 = time.perf_counter()
        m = self.model
        logits = m._logits()
        if not self.tokens:
            for tok_id, bias in self.first_bias.items():
                logits[tok_id] += bias
        for tok_id, bias in self.bias.items():
            logits[tok_id] += bias
        tok = m._choose(logits, self.sampler, self.tokens[-REPEAT_WINDOW:])
        if m._c.llama_vocab_is_eog(m.vocab, tok) or len(self.tokens) >= self.max_tokens:
            self.close()
            self.decode_s += time.perf_counter() - t0
            return ""
        if self.sampler:
            m._c.llama_sampler_accept(self.sampler, tok)
        self.tokens.append(tok)
        m.llm.eval([tok])
        piece = self._utf8.decode(m.llm.detokenize([tok], special=False))
        self.text += piece
        self.decode_s += time.perf_counter() - t0
        return piece

    def close(self) -> None:
        self.finished = True
        if self.sampler:
            self.model._c.llama_sampler_free(self.sampler)
            self.sampler = None
