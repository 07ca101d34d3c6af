"""The speech decoder's first stage: LLM hidden states of spoken tokens -> audio codes, on llama.cpp.

The condition of a chunk is one row per spoken token, the token's text
embedding plus a projection (MLP `projector_semantic`, LLM width -> TTS width,
L2-normalised when the bundle says so) of its LLM hidden state, then the
audio-begin embedding (the reference's duplex condition: no text-end row; a
chunk without words is the audio-begin row alone). The speech budget is the
reference's (docs/conformance.md): a chunk draws up to 26 codes, each fed back
through the code embedding, and the last draw is dropped unfed, so 25 codes
(1 s of speech) come out. The end code (the last code id) is masked until the
budget is drawn, except in the chunk a turn starts or ends in, where it may end
the chunk's speech early. Each code is drawn as the reference's TTS draws it:
logits over the temperature, then its repetition penalty (a code seen f times
among this chunk's last 16 has its logit divided by penalty^f when positive,
multiplied when negative), then a categorical draw.

A turn is one TTS context, as in the reference's streaming TTS: each chunk's
condition follows the codes of the chunks before it, positions continue, and
the sampler (its seed and repetition history) runs on; `begin_turn` starts the
next turn from scratch. When a long turn would overflow the context, the
first chunk (the turn's start) is kept and the oldest chunks after it are
dropped. The TTS GGUF has tokenizer "none", so it is never asked to tokenize.
`projector_spk` is not used: the voice comes from token2wav's prompt.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from edge.backends.llama import LlamaModel
from edge.backends.sampling import Sampling
from edge.bundle.runtime import TTSFacts

log = logging.getLogger(__name__)
PROJECTOR = "projector_semantic"


class TTS:
    def __init__(self, gguf: Path, extras: Path, facts: TTSFacts, sampling: Sampling, n_ctx: int = 2048,
                 threads: int = 1, n_gpu_layers: int = 0) -> None:
        with np.load(extras) as z:
            arrays = {k: z[k].astype(np.float32) for k in z.files}
        need = ["emb_text.weight", f"{PROJECTOR}.linear1.weight"]
        missing = [k for k in need if k not in arrays]
        if missing:
            raise ValueError(f"{extras.name} lacks {', '.join(missing)}; rebuild the bundle's TTS part")
        self.emb_text = arrays["emb_text.weight"]
        for name, tid in (("text-end", facts.text_eos_id), ("audio-begin", facts.audio_bos_id)):
            if not 0 <= tid < len(self.emb_text):
                raise ValueError(f"the manifest's TTS {name} token id {tid} is outside the TTS text table of "
                                 f"{len(self.emb_text)}; rebuild the bundle")
        self.text_end, self.audio_begin = self.emb_text[[facts.text_eos_id]], self.emb_text[[facts.audio_bos_id]]
        self.proj = [(arrays[f"{PROJECTOR}.{n}.weight"], arrays.get(f"{PROJECTOR}.{n}.bias"))
                     for n in ("linear1", "linear2") if f"{PROJECTOR}.{n}.weight" in arrays]
        self.normalize = facts.normalize_projected_hidden
        self.model = LlamaModel(gguf, n_ctx, threads, n_gpu_layers, has_vocab=False)
        self.n_codes = self.model.n_vocab
        self.eos = self.n_codes - 1  # the last code id ends the speech
        self.n_speech = self.eos
        self.llm_dim = self.proj[0][0].shape[1]
        self.sampling = sampling
        self.slides = 0
        self.begin_turn()

    def begin_turn(self) -> None:
        """A new turn: an empty context, the sampler from its seed with no history."""
        self.model.clear()
        self.rng = np.random.default_rng(self.sampling.seed)
        self.starts: list[int] = []  # context position where each chunk of the turn begins

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
        """Rows fed before a chunk's codes: one per spoken token, then audio-begin."""
        ids = np.asarray(token_ids, np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(self.emb_text)):
            raise ValueError(f"a spoken token id is outside the TTS text table of {len(self.emb_text)} entries")
        cond = self.emb_text[ids]
        if hidden is not None:
            if hidden.shape != (len(ids), self.llm_dim):
                raise ValueError(f"hidden states must be ({len(ids)}, {self.llm_dim}); got {list(hidden.shape)}")
            cond = cond + self.project(hidden)
        return np.concatenate([cond, self.audio_begin]).astype(np.float32)

    def _make_room(self, need: int) -> None:
        """Keep the turn's first chunk and drop the oldest chunks after it until `need` positions fit."""
        m = self.model
        if need > m.n_ctx:
            raise ValueError(f"a chunk needs {need} TTS positions, over its context of {m.n_ctx}")
        if m.n_past + need <= m.n_ctx:
            return
        if len(self.starts) >= 2 and m.can_shift():
            sink = self.starts[1]
            cut = next((s for s in self.starts[2:] if m.n_past - (s - sink) + need <= m.n_ctx), m.n_past)
            m.remove(sink, cut)
            self.starts = self.starts[:1] + [s - (cut - sink) for s in self.starts if s >= cut]
            self.slides += 1
        if m.n_past + need > m.n_ctx:  # the first chunk alone is too long to keep
            m.clear()
            self.starts = []

    def draw(self, logits: np.ndarray, chunk: list[int], may_end: bool) -> int:
        """One code, as the reference's TTS draws it (see the module's note); temperature 0: argmax."""
        sp = self.sampling
        x = np.asarray(logits, np.float64)[: self.n_codes].copy()
        if sp.temperature > 0:
            x /= sp.temperature
        if chunk and sp.repetition_penalty != 1.0:
            seen = np.bincount(chunk[-max(1, sp.repetition_window):], minlength=len(x))[: len(x)]
            alpha = sp.repetition_penalty ** seen
            x = np.where(x < 0, x * alpha, x / alpha)
        if not may_end:
            x[self.n_speech:] = -np.inf
        if sp.temperature <= 0:
            return int(np.argmax(x))
        p = np.exp(x - x.max())
        return int(self.rng.choice(len(p), p=p / p.sum()))

    def next_codes(self, token_ids: list[int], hidden: np.ndarray | None, draws: int = 26,
                   min_draws: int = 26) -> np.ndarray:
        """This chunk's codes, after everything the turn said before: up to `draws` drawn, the last dropped;
        the end code cannot come before `min_draws` (0 where the turn starts or ends)."""
        m = self.model
        cond = self.condition(token_ids, hidden)
        self._make_room(len(cond) + draws)
        self.starts.append(m.n_past)
        logits = m.prefill_embeddings(cond, want_logits=True)
        out: list[int] = []
        for t in range(draws):
            code = self.draw(logits, out, t >= min_draws)
            if code >= self.n_speech or t == draws - 1:
                break  # the end code, or the budget's last draw: neither is kept nor fed
            out.append(code)
            logits, _ = m.step(code, copy=False)
        return np.asarray(out, np.int64)

    def codes(self, token_ids: list[int], hidden: np.ndarray | None, draws: int = 26) -> np.ndarray:
        """Speech codes for one piece of text that is a whole turn (a fresh context)."""
        self.begin_turn()
        return self.next_codes(token_ids, hidden, draws, 0)

    def close(self) -> None:
        self.model.close()
