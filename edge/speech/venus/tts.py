"""The speech decoder's first stage: LLM hidden states of spoken tokens -> audio codes, on llama.cpp.

The condition is one row per spoken token, the token's text embedding plus an
L2-normalised projection (MLP `projector_semantic`, LLM width -> TTS width) of
its LLM hidden state (the state at the token's own position), then the text
embeddings of text-end and audio-begin. Codes are then decoded one by one (fed
back as token ids through the code embedding) until the end code (the last
code id) or the cap. The TTS GGUF has tokenizer "none", so it is never asked to
tokenize. `projector_spk` is not used: the voice comes from token2wav's prompt.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import numpy as np

from edge.backends.llama import LlamaModel
from edge.backends.sampling import Sampler
from edge.bundle.settings import Sampling

log = logging.getLogger("edge.venus")
PROJECTOR = "projector_semantic"


class TTS:
    def __init__(self, gguf: Path, extras: Path, text_eos: int | None, audio_bos: int | None, sampling: Sampling,
                 n_ctx: int = 2048, threads: int = 1, n_gpu_layers: int = 0, normalize: bool = True,
                 fallback: Callable[[], tuple[int, int]] | None = None) -> None:
        """`text_eos`/`audio_bos`: text ids from tts_config; where missing or outside the text table,
        `fallback` names them (the LLM vocabulary's TTS tokens)."""
        with np.load(extras) as z:
            arrays = {k: z[k].astype(np.float32) for k in z.files}
        need = ["emb_text.weight", f"{PROJECTOR}.linear1.weight"]
        missing = [k for k in need if k not in arrays]
        if missing:
            raise ValueError(f"{extras.name} lacks {', '.join(missing)}; rebuild the bundle's TTS part")
        self.emb_text = arrays["emb_text.weight"]
        valid = all(t is not None and 0 <= t < len(self.emb_text) for t in (text_eos, audio_bos))
        if not valid and fallback is not None:
            log.warning("venus voice: tts_config's text-end/audio-begin ids (%s, %s) do not fit the TTS text table; "
                        "using the vocabulary's TTS tokens", text_eos, audio_bos)
            text_eos, audio_bos = fallback()
        for name, tid in (("text-end", text_eos), ("audio-begin", audio_bos)):
            if tid is None or not 0 <= tid < len(self.emb_text):
                raise ValueError(f"the TTS {name} token id {tid} is outside its text table of {len(self.emb_text)}")
        self.boundary = self.emb_text[[text_eos, audio_bos]]
        self.proj = [(arrays[f"{PROJECTOR}.{n}.weight"], arrays.get(f"{PROJECTOR}.{n}.bias"))
                     for n in ("linear1", "linear2") if f"{PROJECTOR}.{n}.weight" in arrays]
        self.normalize = normalize
        self.model = LlamaModel(gguf, n_ctx, threads, n_gpu_layers, has_vocab=False)
        self.n_codes = self.model.n_vocab
        self.eos = self.n_codes - 1  # the last code id ends the speech
        self.n_speech = self.eos
        self.llm_dim = self.proj[0][0].shape[1]
        self.sampling = sampling

    def project(self, hidden: np.ndarray) -> np.ndarray:
        x = np.asarray(hidden, np.float32)
        for i, (w, b) in enumerate(self.proj):
            x = x @ w.T + (b if b is not None else 0.0)
            if i < len(self.proj) - 1:
                x = np.maximum(x, 0.0)  # ReLU between the projector's two layers
        if self.normalize:
            x = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
        return x

    def condition(self, token_ids: list[int], hidden: np.ndarray | None) -> np.ndarray:
        """Rows fed before the first code: one per spoken token, then text-end and audio-begin."""
        ids = np.asarray(token_ids, np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(self.emb_text)):
            raise ValueError(f"a spoken token id is outside the TTS text table of {len(self.emb_text)} entries")
        cond = self.emb_text[ids]
        if hidden is not None:
            if hidden.shape != (len(ids), self.llm_dim):
                raise ValueError(f"hidden states must be ({len(ids)}, {self.llm_dim}); got {list(hidden.shape)}")
            cond = cond + self.project(hidden)
        return np.concatenate([cond, self.boundary]).astype(np.float32)

    def codes(self, token_ids: list[int], hidden: np.ndarray | None, max_codes: int) -> np.ndarray:
        """Speech codes for one piece of text (a fresh TTS context per piece)."""
        m = self.model
        m.clear()
        cond = self.condition(token_ids, hidden)
        if len(cond) + max_codes > m.n_ctx:
            raise ValueError(f"{len(token_ids)} tokens and {max_codes} codes need {len(cond) + max_codes} TTS "
                             f"positions, over its context of {m.n_ctx}")
        sampler = Sampler(self.sampling, listen_id=self.eos, turn_eos_id=self.eos)  # no listen/turn rules here
        logits = m.prefill_embeddings(cond, want_logits=True)
        out: list[int] = []
        none = np.zeros(0, np.int64)
        while len(out) < max_codes and logits is not None:
            code = sampler.sample(logits, none)
            if code >= self.n_speech:
                break  # the end of this piece's speech
            sampler.remember(code)
            out.append(code)
            logits, _ = m.step(code, copy=False)
        return np.asarray(out, np.int64)

    def close(self) -> None:
        self.model.close()
