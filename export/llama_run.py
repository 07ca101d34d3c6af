"""A small llama.cpp runner over the low-level API: load a GGUF, tokenize, get logits, decode greedily.

Used by verify and the tests. It never tokenizes on a model whose tokenizer is
"none" (the TTS): llama.cpp aborts the process there, so `tokenize` refuses.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from export.errors import ExportError


def _lib():
    import llama_cpp
    from llama_cpp._logger import set_verbose

    set_verbose(False)  # llama.cpp's own log lines would drown the progress bars
    return llama_cpp


class LlamaRunner:
    """One model and one context on the CPU; call close() (or use `with`) to free them."""

    def __init__(self, path: Path, n_ctx: int = 256, n_threads: int = 1, has_vocab: bool = True):
        ll = self.ll = _lib()
        ll.llama_backend_init()
        mp = ll.llama_model_default_params()
        self.model = ll.llama_model_load_from_file(str(path).encode(), mp)
        if not self.model:
            raise ExportError(f"llama.cpp could not load {path}.")
        cp = ll.llama_context_default_params()
        cp.n_ctx = cp.n_batch = cp.n_ubatch = n_ctx
        cp.n_threads = cp.n_threads_batch = n_threads
        cp.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.ctx = ll.llama_init_from_model(self.model, cp)
        if not self.ctx:
            ll.llama_model_free(self.model)
            raise ExportError(f"llama.cpp could not create a context for {path}.")
        self.vocab = ll.llama_model_get_vocab(self.model)
        self.has_vocab = has_vocab
        self.n_vocab = int(ll.llama_vocab_n_tokens(self.vocab))
        self.n_embd = int(ll.llama_model_n_embd(self.model))
        self.n_ctx = n_ctx

    def __enter__(self) -> LlamaRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if getattr(self, "ctx", None):
            self.ll.llama_free(self.ctx)
            self.ctx = None
        if getattr(self, "model", None):
            self.ll.llama_model_free(self.model)
            self.model = None

    def tokenize(self, text: str, parse_special: bool) -> list[int]:
        if not self.has_vocab:
            raise ExportError("This model has no text vocabulary (tokenizer 'none'), so it cannot tokenize.")
        raw = text.encode("utf-8")
        buf = (self.ll.llama_token * (len(raw) + 8))()
        n = self.ll.llama_tokenize(self.vocab, raw, len(raw), buf, len(buf), False, parse_special)
        if n < 0:
            raise ExportError(f"llama.cpp could not tokenize a {len(raw)}-byte text.")
        return list(buf[:n])

    def _decode(self, n: int, fill, first_pos: int) -> np.ndarray:
        if first_pos == 0:
            self.reset()  # position 0 starts a new sequence
        batch = self.ll.llama_batch_init(n, fill[0], 1)
        try:
            batch.n_tokens = n
            fill[1](batch)
            for i in range(n):
                batch.pos[i] = first_pos + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = 1
            rc = self.ll.llama_decode(self.ctx, batch)
            if rc != 0:
                raise ExportError(f"llama.cpp failed to decode a batch of {n} (code {rc}).")
            out = np.empty((n, self.n_vocab), dtype=np.float32)
            for i in range(n):
                ptr = self.ll.llama_get_logits_ith(self.ctx, i)
                out[i] = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))
            return out
        finally:
            self.ll.llama_batch_free(batch)

    def reset(self) -> None:
        self.ll.llama_memory_clear(self.ll.llama_get_memory(self.ctx), True)

    def logits(self, tokens: list[int], first_pos: int = 0) -> np.ndarray:
        """Logits for every position of `tokens`, placed after `first_pos` cached positions (0: a fresh cache)."""
        def fill(b):
            for i, t in enumerate(tokens):
                b.token[i] = int(t)
        return self._decode(len(tokens), (0, fill), first_pos)

    def logits_from_embeddings(self, embd: np.ndarray, first_pos: int = 0) -> np.ndarray:
        embd = np.ascontiguousarray(embd, dtype=np.float32)
        if embd.ndim != 2 or embd.shape[1] != self.n_embd:
            raise ExportError(f"Embedding input must be (n, {self.n_embd}); got {list(embd.shape)}.")

        def fill(b):
            ctypes.memmove(b.embd, embd.ctypes.data, embd.nbytes)
        return self._decode(embd.shape[0], (self.n_embd, fill), first_pos)

    def greedy(self, prompt: list[int], n_new: int) -> list[int]:
        """Decode n_new tokens greedily after `prompt` (fresh cache)."""
        last = self.logits(prompt)[-1]
        out: list[int] = []
        for k in range(n_new):
            tok = int(np.argmax(last))
            out.append(tok)
            last = self.logits([tok], first_pos=len(prompt) + k)[-1]
        return out
