"""A small llama.cpp session over the low-level API: load, prefill, logits, decode.

The sweep needs things the high-level `Llama` class hides: logits for every
position of a prefill, embedding-input batches, and a clean load-time figure.
"""
from __future__ import annotations

import ctypes
import time
from pathlib import Path

import llama_cpp as ll
import numpy as np

_LOG_SINK = None  # keeps the ctypes callback alive for the life of the process


def quiet_llama() -> None:
    """Silence llama.cpp's own logging (it writes to stderr from C)."""
    global _LOG_SINK
    if _LOG_SINK is None:
        _LOG_SINK = ll.llama_log_callback(lambda level, text, user_data: None)
        ll.llama_log_set(_LOG_SINK, ctypes.c_void_p(0))
        ll.llama_backend_init()


def _tokenize(vocab, text: str, special: bool) -> list[int]:
    data = text.encode("utf-8")
    cap = len(data) + 8
    buf = (ll.llama_token * cap)()
    n = ll.llama_tokenize(vocab, data, len(data), buf, cap, False, special)
    if n < 0:
        cap = -n
        buf = (ll.llama_token * cap)()
        n = ll.llama_tokenize(vocab, data, len(data), buf, cap, False, special)
    return list(buf[:n])


class Vocab:
    """A model's vocabulary alone (no weights loaded): counts tokens before a context is sized."""

    def __init__(self, path: str | Path) -> None:
        quiet_llama()
        params = ll.llama_model_default_params()
        params.vocab_only = True
        self.model = ll.llama_model_load_from_file(str(path).encode(), params)
        if not self.model:
            raise ValueError(f"llama.cpp could not read the vocabulary of {path}")
        self.vocab = ll.llama_model_get_vocab(self.model)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return _tokenize(self.vocab, text, special)

    def __enter__(self) -> "Vocab":
        return self

    def __exit__(self, *exc) -> None:
        if self.model:
            ll.llama_model_free(self.model)
            self.model = None


class LlamaSession:
    """One model and one context (a single sequence) on llama.cpp."""

    def __init__(self, path: str | Path, n_ctx: int = 1024, n_threads: int = 1, n_batch: int = 512,
                 n_gpu_layers: int = 0, cb_eval=None, use_mmap: bool = True) -> None:
        quiet_llama()
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"model file {path} does not exist")
        t0 = time.perf_counter()
        mparams = ll.llama_model_default_params()
        mparams.n_gpu_layers = n_gpu_layers
        mparams.use_mmap = use_mmap  # with mmap, weights page in during the first decode, not at load
        self.model = ll.llama_model_load_from_file(str(path).encode(), mparams)
        if not self.model:
            raise ValueError(f"llama.cpp could not load {path}; is it a GGUF file of a supported architecture?")
        cparams = ll.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = n_batch
        cparams.n_ubatch = n_batch
        cparams.n_threads = n_threads
        cparams.n_threads_batch = n_threads
        cparams.no_perf = True
        # Fixed, so that speeds of different precisions compare like for like.
        cparams.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_DISABLED
        if cb_eval is not None:
            cparams.cb_eval = cb_eval
        self.ctx = ll.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            ll.llama_model_free(self.model)
            raise ValueError(f"llama.cpp could not create a context of {n_ctx} tokens for {path}")
        self.load_s = time.perf_counter() - t0
        self.vocab = ll.llama_model_get_vocab(self.model)
        self.n_vocab = ll.llama_vocab_n_tokens(self.vocab)
        self.n_embd = ll.llama_model_n_embd(self.model)
        self.n_ctx = ll.llama_n_ctx(self.ctx)
        self.n_batch = n_batch
        self.n_past = 0
        self._batch = ll.llama_batch_init(n_batch, 0, 1)

    # -- vocabulary -------------------------------------------------------
    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return _tokenize(self.vocab, text, special)

    def token_id(self, piece: str) -> int | None:
        """The id of a special token such as '<|listen|>', or None if it is not one vocabulary entry."""
        ids = self.tokenize(piece, special=True)
        return ids[0] if len(ids) == 1 else None

    # -- decoding ---------------------------------------------------------
    def reset(self) -> None:
        ll.llama_memory_clear(ll.llama_get_memory(self.ctx), True)
        self.n_past = 0

    def _room(self, n: int) -> None:
        if self.n_past + n > self.n_ctx:
            raise ValueError(f"context of {self.n_ctx} tokens is full ({self.n_past} used, {n} more asked)")

    def _logits(self, n_out: int) -> np.ndarray:
        ptr = ll.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n_out, self.n_vocab)).copy()

    def prefill(self, tokens: list[int], all_logits: bool = False) -> np.ndarray:
        """Feed token ids; return logits of every position (all_logits) or of the last one, shape (k, vocab)."""
        if not tokens:
            raise ValueError("nothing to prefill: the token list is empty")
        self._room(len(tokens))
        out = []
        b = self._batch
        for start in range(0, len(tokens), self.n_batch):
            part = tokens[start:start + self.n_batch]
            last_part = start + self.n_batch >= len(tokens)
            for i, tok in enumerate(part):
                b.token[i] = tok
                b.pos[i] = self.n_past + i
                b.n_seq_id[i] = 1
                b.seq_id[i][0] = 0
                b.logits[i] = all_logits or (last_part and i == len(part) - 1)
            b.n_tokens = len(part)
            if ll.llama_decode(self.ctx, b) != 0:
                raise RuntimeError(f"llama_decode failed at position {self.n_past}")
            self.n_past += len(part)
            if all_logits:
                out.append(self._logits(len(part)))
            elif last_part:
                out.append(self._logits(1))
        return np.concatenate(out, axis=0)

    def prefill_embeddings(self, rows: np.ndarray) -> np.ndarray:
        """Feed embedding rows (n, n_embd) as one sequence segment; return the last position's logits (1, vocab)."""
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self.n_embd:
            raise ValueError(f"embeddings must have shape (n, {self.n_embd}), got {rows.shape}")
        self._room(len(rows))
        out = None
        for start in range(0, len(rows), self.n_batch):
            part = rows[start:start + self.n_batch]
            b = ll.llama_batch_init(len(part), self.n_embd, 1)
            try:
                ctypes.memmove(b.embd, part.ctypes.data, part.nbytes)
                for i in range(len(part)):
                    b.pos[i] = self.n_past + i
                    b.n_seq_id[i] = 1
                    b.seq_id[i][0] = 0
                    b.logits[i] = i == len(part) - 1
                b.n_tokens = len(part)
                if ll.llama_decode(self.ctx, b) != 0:
                    raise RuntimeError(f"llama_decode of embeddings failed at position {self.n_past}")
            finally:
                ll.llama_batch_free(b)
            self.n_past += len(part)
            out = self._logits(1)
        assert out is not None
        return out

    def greedy(self, n: int, first: int) -> list[int]:
        """Decode n tokens greedily, one per llama_decode, starting by feeding `first`."""
        out, tok = [], first
        for _ in range(n):
            tok = int(np.argmax(self.prefill([tok])[0]))
            out.append(tok)
        return out

    def close(self) -> None:
        if getattr(self, "ctx", None):
            ll.llama_batch_free(self._batch)
            ll.llama_free(self.ctx)
            ll.llama_model_free(self.model)
            self.ctx = None

    def __enter__(self) -> "LlamaSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (VmHWM), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
