"""llama.cpp through llama-cpp-python's low-level API: token and embedding batches, logits, hidden states, KV edits.

One model, one context, one sequence (0). Positions are tracked here (`n_past`);
the KV window slides by removing a range and shifting what follows. Hidden
states (after the final norm) are computed only for decodes that ask for them:
llama.cpp outputs every row while embeddings are on, which slows prefill.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from edge.formats import KV_TYPES


def library():
    """llama_cpp with llama.cpp's own logging off (its lines would drown progress bars and reports)."""
    import llama_cpp
    from llama_cpp._logger import set_verbose

    set_verbose(False)
    return llama_cpp


class LlamaError(RuntimeError):
    pass


KV_GGML = {t: f"GGML_TYPE_{t.upper()}" for t in KV_TYPES}  # llama.cpp's name of each KV-cache type


def kv_ggml_type(ll, kv_type: str) -> int:
    """llama.cpp's number for a KV cache type name (f16, q8_0, q4_0)."""
    if kv_type not in KV_TYPES:
        raise LlamaError(f"the KV cache type must be one of {', '.join(KV_TYPES)}, not {kv_type!r}")
    return int(getattr(ll, KV_GGML[kv_type]))


def _tokenize(ll, vocab, text: str, special: bool) -> list[int]:
    raw = text.encode("utf-8")
    buf = (ll.llama_token * (len(raw) + 8))()  # never more ids than bytes (no BOS/EOS are added)
    n = ll.llama_tokenize(vocab, raw, len(raw), buf, len(buf), False, special)
    if n < 0:
        raise LlamaError(f"llama.cpp could not tokenize a {len(raw)}-byte text")
    return list(buf[:n])


class LlamaVocab:
    """A GGUF's vocabulary alone (no weights, no context): counting tokens before a context is sized."""

    def __init__(self, path: Path) -> None:
        ll = self.ll = library()
        ll.llama_backend_init()
        mp = ll.llama_model_default_params()
        mp.vocab_only = True
        self.model = ll.llama_model_load_from_file(str(path).encode(), mp)
        if not self.model:
            raise LlamaError(f"llama.cpp could not read the vocabulary of {Path(path).name}.")
        self.vocab = ll.llama_model_get_vocab(self.model)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return _tokenize(self.ll, self.vocab, text, special)

    def close(self) -> None:
        if getattr(self, "model", None):
            self.ll.llama_model_free(self.model)
            self.model = None

    def __enter__(self) -> "LlamaVocab":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LlamaModel:
    """One model and one context. `use_mmap` False reads the weights at load, not during the first decodes;
    `eval_callback` (a ggml_backend_sched_eval_callback, kept alive by the caller) sees every node a decode
    computes."""

    def __init__(self, path: Path, n_ctx: int, threads: int = 1, n_gpu_layers: int = 0, flash_attn: bool = False,
                 has_vocab: bool = True, n_batch: int = 512, kv_type: str = "f16", use_mmap: bool = True,
                 eval_callback=None) -> None:
        ll = self.ll = library()
        kv = kv_ggml_type(ll, kv_type)  # a bad name is refused before anything loads
        ll.llama_backend_init()
        mp = ll.llama_model_default_params()
        mp.n_gpu_layers = n_gpu_layers
        mp.use_mmap = use_mmap
        self.model = ll.llama_model_load_from_file(str(path).encode(), mp)
        if not self.model:
            raise LlamaError(f"llama.cpp could not load {path.name}; the file is not a GGUF this llama.cpp reads.")
        self.n_ctx_train = int(ll.llama_model_n_ctx_train(self.model))
        if 0 < self.n_ctx_train < n_ctx:  # past the trained context the model degrades; never ask for more
            n_ctx = self.n_ctx_train
        cp = ll.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = cp.n_ubatch = min(n_batch, n_ctx)
        cp.n_threads = cp.n_threads_batch = max(1, threads)
        cp.embeddings = True
        cp.pooling_type = ll.LLAMA_POOLING_TYPE_NONE
        cp.type_k = cp.type_v = kv
        # llama.cpp keeps a quantized V cache only with flash attention, so a quantized cache turns it on
        flash_attn = flash_attn or kv_type != "f16"
        cp.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else ll.LLAMA_FLASH_ATTN_TYPE_DISABLED
        if eval_callback is not None:
            cp.cb_eval = eval_callback
        self.ctx = ll.llama_init_from_model(self.model, cp)
        if not self.ctx:
            ll.llama_model_free(self.model)
            raise LlamaError(f"llama.cpp could not create a context of {n_ctx} for {path.name} (out of memory?).")
        self.path = path
        self.kv_type = kv_type
        self.n_batch = int(cp.n_batch)
        self.n_ctx = int(ll.llama_n_ctx(self.ctx))
        self.vocab = ll.llama_model_get_vocab(self.model)
        self.has_vocab = has_vocab
        self.n_vocab = int(ll.llama_vocab_n_tokens(self.vocab))
        self.n_embd = int(ll.llama_model_n_embd(self.model))
        self.n_params = int(ll.llama_model_n_params(self.model))
        self.mem = ll.llama_get_memory(self.ctx)
        self.n_past = 0
        self._pieces: dict[int, bytes] = {}
        self._views: dict[int, np.ndarray] = {}
        self._logits_t = ctypes.c_float * self.n_vocab
        self._hidden_t = ctypes.c_float * self.n_embd
        self._embeddings_on = True
        self._one = ll.llama_batch_init(1, 0, 1)  # the decode loop's single-token batch, reused
        self._one.n_tokens, self._one.n_seq_id[0], self._one.seq_id[0][0], self._one.logits[0] = 1, 1, 0, 1
        self._tok = ll.llama_batch_init(self.n_batch, 0, 1)
        self._emb = ll.llama_batch_init(self.n_batch, self.n_embd, 1)

    # --- decoding ----------------------------------------------------------------------------
    def _embeddings(self, on: bool) -> None:
        if on != self._embeddings_on:
            self.ll.llama_set_embeddings(self.ctx, on)
            self._embeddings_on = on

    def _run(self, batch, n: int, outputs: str) -> None:
        """Decode `n` rows at n_past; outputs "last", "all" or "none"."""
        if self.n_past + n > self.n_ctx:
            raise LlamaError(f"the context is full ({self.n_past} + {n} > {self.n_ctx}); the KV window must slide "
                             "first")
        batch.n_tokens = n
        for i in range(n):
            batch.pos[i] = self.n_past + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = outputs == "all" or (outputs == "last" and i == n - 1)
        rc = self.ll.llama_decode(self.ctx, batch)
        if rc != 0:
            raise LlamaError(f"llama_decode failed with code {rc} at position {self.n_past} ({n} rows)")
        self.n_past += n

    def logits(self, i: int = -1, copy: bool = True) -> np.ndarray:
        """Output row i's logits; `copy=False` gives a view of llama.cpp's buffer (valid until the next decode,
        and writable: the sampler writes its adjustments there)."""
        view = self._view(self.ll.llama_get_logits_ith(self.ctx, i), self._logits_t)
        return view.copy() if copy else view

    def hidden(self, i: int = -1) -> np.ndarray:
        ptr = self.ll.llama_get_embeddings_ith(self.ctx, i)
        if not ptr:
            raise LlamaError("llama.cpp returned no hidden state (embeddings were off for this decode)")
        return self._view(ptr, self._hidden_t).copy()

    def _view(self, ptr, row_type) -> np.ndarray:
        """A NumPy view of a llama.cpp output row; views are cached by address (the buffers rarely move)."""
        addr = ctypes.cast(ptr, ctypes.c_void_p).value
        view = self._views.get(addr)
        if view is None or len(view) != row_type._length_:
            if len(self._views) > 64:
                self._views.clear()
            view = self._views[addr] = np.frombuffer(row_type.from_address(addr), np.float32)
        return view

    def step(self, token: int, hidden: bool = False, copy: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Decode one token: the next-token logits and, when asked, this token's hidden state.

        Embeddings are switched on only when asked and left on (one output row costs the same either
        way); prefill switches them off, so a chunk toggles at most twice. The one-row batch keeps its
        sequence and output flags from set-up; only the token and position change."""
        if hidden:
            self._embeddings(True)
        if self.n_past >= self.n_ctx:
            raise LlamaError(f"the context is full ({self.n_ctx} positions); the KV window must slide first")
        b = self._one
        b.token[0] = token
        b.pos[0] = self.n_past
        rc = self.ll.llama_decode(self.ctx, b)
        if rc != 0:
            raise LlamaError(f"llama_decode failed with code {rc} at position {self.n_past} (1 row)")
        self.n_past += 1
        return self.logits(0, copy), (self.hidden(0) if hidden else None)

    def _prefill(self, rows, outputs: str, collect: bool = False) -> tuple[int, list[np.ndarray]]:
        """Decode token ids (a list) or input embeddings ((n, n_embd) float32) in batches of n_batch.

        `outputs` "last", "all" or "none"; returns the size of the last batch and, with `collect`, a copy of
        every batch's logits. Token ids and embeddings never share a batch."""
        embd = isinstance(rows, np.ndarray) and rows.ndim == 2
        b = self._emb if embd else self._tok
        self._embeddings(False)
        n, got = 0, []
        for start in range(0, len(rows), self.n_batch):
            part = rows[start:start + self.n_batch]
            if embd:
                ctypes.memmove(b.embd, part.ctypes.data, part.nbytes)
            else:
                for i, t in enumerate(part):
                    b.token[i] = int(t)
            n = len(part)
            last = start + n == len(rows)
            self._run(b, n, outputs if outputs == "all" or last else "none")
            if collect:
                got.append(np.ctypeslib.as_array(self.ll.llama_get_logits(self.ctx), shape=(n, self.n_vocab)).copy())
        return n, got

    def _checked(self, embd: np.ndarray) -> np.ndarray:
        embd = np.ascontiguousarray(embd, dtype=np.float32)
        if embd.ndim != 2 or embd.shape[1] != self.n_embd:
            raise LlamaError(f"embedding input must be (n, {self.n_embd}); got {list(embd.shape)}")
        return embd

    def prefill_tokens(self, tokens: list[int], want_logits: bool = True) -> np.ndarray | None:
        """Decode token ids in batches of n_batch; the logits after the last one (a view, or None)."""
        if not tokens:
            return None
        n, _ = self._prefill(tokens, "last" if want_logits else "none")
        return self.logits(n - 1, copy=False) if want_logits else None

    def prefill_embeddings(self, embd: np.ndarray, want_logits: bool = False) -> np.ndarray | None:
        """Decode rows of input embeddings (n, n_embd); token ids and embeddings never share a batch."""
        embd = self._checked(embd)
        if len(embd) == 0:
            return None
        n, _ = self._prefill(embd, "last" if want_logits else "none")
        return self.logits(n - 1, copy=False) if want_logits else None

    def logits_all(self, rows: list[int] | np.ndarray) -> np.ndarray:
        """Decode token ids, or input embeddings (n, n_embd), at n_past: the logits after every row, (n, n_vocab).

        For measuring a model (perplexity, agreement with a reference); the chunk loop needs only the last row."""
        if isinstance(rows, np.ndarray) and rows.ndim == 2:
            rows = self._checked(rows)
        if len(rows) == 0:
            return np.empty((0, self.n_vocab), np.float32)
        return np.concatenate(self._prefill(rows, "all", collect=True)[1])

    # --- KV cache ------------------------------------------------------------------------------
    def can_shift(self) -> bool:
        return bool(self.ll.llama_memory_can_shift(self.mem))

    def remove(self, p0: int, p1: int) -> None:
        """Forget positions [p0, p1) and move everything after them down, so positions stay contiguous."""
        if not self.ll.llama_memory_seq_rm(self.mem, 0, p0, p1):
            raise LlamaError(f"llama.cpp could not remove KV positions [{p0}, {p1})")
        self.ll.llama_memory_seq_add(self.mem, 0, p1, -1, -(p1 - p0))
        self.n_past -= p1 - p0

    def compact(self, max_bytes: int) -> bool:
        """Move the sequence's cells to the front of the KV cache, in order; False (nothing done) when its saved
        state would pass `max_bytes` (the copy is held in host memory for a moment).

        Removing a range leaves a hole of free cells, and llama.cpp attends over every cell up to the highest
        one in use (masked where free): after a slide of the window, each decode would cost as if the cache
        were at its high mark until those cells are freed (measured on the tiny Omni bundle: 20 ms of prefill
        CPU at 2000 live positions, as at 3900). Writing the sequence out and reading it back places it in
        contiguous cells. Call it after a decode has followed `remove`: llama.cpp applies the position shift
        to the keys at the next decode, and the saved state must hold the shifted keys."""
        ll = self.ll
        size = int(ll.llama_state_seq_get_size(self.ctx, 0))
        if size > max_bytes:
            return False
        buf = (ctypes.c_uint8 * size)()
        n = int(ll.llama_state_seq_get_data(self.ctx, buf, size, 0))
        if n == 0:
            raise LlamaError("llama.cpp could not save the KV cache to compact it")
        ll.llama_memory_seq_rm(self.mem, 0, -1, -1)
        if int(ll.llama_state_seq_set_data(self.ctx, buf, n, 0)) == 0:
            raise LlamaError("llama.cpp could not restore the KV cache after compacting it")
        return True

    def truncate(self, pos: int) -> None:
        """Drop every position from `pos` on (undo a partial decode)."""
        self.ll.llama_memory_seq_rm(self.mem, 0, pos, -1)
        self.n_past = pos

    def clear(self) -> None:
        self.ll.llama_memory_clear(self.mem, True)
        self.n_past = 0

    # --- vocabulary (never on a tokenizer-"none" model: llama.cpp aborts there) -----------------
    def tokenize(self, text: str, special: bool = False) -> list[int]:
        if not self.has_vocab:
            raise LlamaError("this model has no text vocabulary, so it cannot tokenize")
        return _tokenize(self.ll, self.vocab, text, special)

    def piece(self, token: int) -> bytes:
        """The visible bytes of a token ('' for control tokens), memoised."""
        got = self._pieces.get(token)
        if got is None:
            got = self._pieces[token] = self._piece(token)
        return got

    def _piece(self, token: int) -> bytes:
        if not self.has_vocab:
            raise LlamaError("this model has no text vocabulary")
        buf = ctypes.create_string_buffer(64)
        n = self.ll.llama_token_to_piece(self.vocab, int(token), buf, 64, 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self.ll.llama_token_to_piece(self.vocab, int(token), buf, -n, 0, False)
        return buf.raw[:max(n, 0)]

    def __enter__(self) -> "LlamaModel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        ll = self.ll
        for name in ("_one", "_tok", "_emb"):
            b = self.__dict__.pop(name, None)
            if b is not None:
                ll.llama_batch_free(b)
        if getattr(self, "ctx", None):
            ll.llama_free(self.ctx)
            self.ctx = None
        if getattr(self, "model", None):
            ll.llama_model_free(self.model)
            self.model = None
