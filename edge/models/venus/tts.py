"""The speech decoder's first stage: LLM hidden states of spoken tokens -> audio codes, on llama.cpp.

Each step's input embedding is the text token's embedding plus an L2-normalised
projection (MLP `projector_semantic`, llm width -> TTS width) of the token's LLM
hidden state; after the condition comes the audio-begin code, then codes are
decoded one by one (fed back as token ids) until a code outside the speech
codebook appears or the cap is reached. The TTS GGUF has tokenizer "none", so
it is never asked to tokenize.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edge.models.venus.llama_backend import LlamaModel

PROJECTOR = "projector_semantic"


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


class TTS:
    def __init__(self, gguf: Path, extras: Path, n_ctx: int = 2048, threads: int = 1, n_gpu_layers: int = 0,
                 normalize: bool = True) -> None:
        with np.load(extras) as z:
            arrays = {k: z[k].astype(np.float32) for k in z.files}
        need = ["emb_text.weight", f"{PROJECTOR}.linear1.weight"]
        missing = [k for k in need if k not in arrays]
        if missing:
            raise ValueError(f"{extras.name} lacks {', '.join(missing)}; rebuild the bundle's TTS part")
        self.emb_text = arrays["emb_text.weight"]
        self.proj = [(arrays[f"{PROJECTOR}.{n}.weight"], arrays.get(f"{PROJECTOR}.{n}.bias"))
                     for n in ("linear1", "linear2") if f"{PROJECTOR}.{n}.weight" in arrays]
        self.normalize = normalize
        self.model = LlamaModel(gguf, n_ctx, threads, n_gpu_layers, has_vocab=False)
        self.n_codes = self.model.n_vocab
        self.audio_bos = self.n_codes - 1  # the last code id begins audio (tts_config.audio_bos_token_id)
        self.n_speech = self.n_codes - 1  # ids at or above this are not speech codes
        self.llm_dim = self.proj[0][0].shape[1]

    def project(self, hidden: np.ndarray) -> np.ndarray:
        x = np.asarray(hidden, np.float32)
        for i, (w, b) in enumerate(self.proj):
            x = x @ w.T + (b if b is not None else 0.0)
            if i < len(self.proj) - 1:
                x = _relu(x)
        if self.normalize:
            x = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
        return x

    def condition(self, token_ids: list[int], hidden: np.ndarray | None) -> np.ndarray:
        ids = np.asarray(token_ids, np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(self.emb_text)):
            raise ValueError(f"a spoken token id is outside the TTS text table of {len(self.emb_text)} entries")
        cond = self.emb_text[ids]
        if hidden is not None:
            if hidden.shape != (len(ids), self.llm_dim):
                raise ValueError(f"hidden states must be ({len(ids)}, {self.llm_dim}); got {list(hidden.shape)}")
            cond = cond + self.project(hidden)
        return cond.astype(np.float32)

    def codes(self, token_ids: list[int], hidden: np.ndarray | None, max_codes: int,
              temperature: float = 0.0, rng: np.random.Generator | None = None) -> np.ndarray:
        """Speech codes for one piece of text (a fresh TTS context per piece)."""
        m = self.model
        m.clear()
        cond = self.condition(token_ids, hidden)
        need = len(cond) + 1 + max_codes
        if need > m.n_ctx:
            raise ValueError(f"{len(cond)} tokens and {max_codes} codes need {need} TTS positions, over its "
                             f"context of {m.n_ctx}")
        m.prefill_embeddings(cond)
        logits = m.prefill_tokens([self.audio_bos])
        out: list[int] = []
        while len(out) < max_codes and logits is not None:
            if temperature > 0 and rng is not None:
                z = logits / temperature
                p = np.exp(z - z.max())
                code = int(rng.choice(len(p), p=p / p.sum()))
            else:
                code = int(np.argmax(logits))
            if code >= self.n_speech:
                break  # the end of this piece's speech
            out.append(code)
            logits, _ = m.step(code)
        return np.asarray(out, np.int64)

    def close(self) -> None:
        self.model.close()
