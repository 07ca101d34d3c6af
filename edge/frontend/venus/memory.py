"""An Omni bundle's side of long-video memory: what a kept frame is stored as, what a question is matched with,
and the model's answer from the frames retrieved.

- A kept frame's descriptor is its vision tokens: the source view (one slice, as the reference stores it)
  through the bundle's vision encoder and resampler, 64 rows in the LLM's embedding space.
- A question's tokens are the rows of the LLM's token-embedding table for its text, in the same space, so
  late interaction (edge/memory/retrieve.py `maxsim_scores`) can compare the two directly.
- The answer: the retrieved frames in time order, each as one unit of the chunk protocol (the frame's
  tokens, then the embeddings of its stored seconds of audio), the question as text after the last one,
  then greedy decoding up to a turn or chunk end.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edge.backends.gguf_rows import token_rows
from edge.backends.llama import LlamaModel
from edge.backends.onnx import open_graph
from edge.bundle.reader import BundleError, open_bundle
from edge.bundle.settings import REFERENCE_SYSTEM_PROMPT
from edge.frontend.venus.chunk_loop import protocol_tokens
from edge.frontend.venus.encoders import AudioEncoder, VisionEncoder
from edge.protocol.tokens import (BACKEND_CLOSE, BACKEND_OPEN, CHUNK_EOS, IMAGE_CLOSE, IMAGE_OPEN, LISTEN,
                                  TURN_EOS, UNIT_CLOSE, UNIT_OPEN)

INPUT_ONLY = (UNIT_OPEN, UNIT_CLOSE, IMAGE_OPEN, IMAGE_CLOSE, BACKEND_OPEN, BACKEND_CLOSE)


class BundleMemory:
    def __init__(self, root: Path, threads: int = 1, n_ctx: int = 4096, max_tokens: int = 24) -> None:
        try:
            bundle = open_bundle(Path(root), device="cpu")
        except BundleError as exc:
            raise ValueError(str(exc)) from None
        if bundle.variant != "omni" or bundle.runtime.vision is None:
            raise ValueError(f"{root} is a {bundle.variant} bundle; memory's descriptors need an omni bundle "
                             "(its vision encoder)")
        vf = bundle.runtime.vision
        cache = bundle.root / ".cache" / "trt"
        self.vision = VisionEncoder(open_graph("vision", bundle.graphs["vision"], None, "cpu", threads, cache),
                                    vf.scale_resolution, vf.patch_size, 1, vf.max_side)
        self.bundle, self.threads, self.n_ctx, self.max_tokens = bundle, threads, n_ctx, max_tokens
        # The LLM and the audio encoder load on the first question: the live vision node only stores frames.
        self._llm: LlamaModel | None = None
        self._audio: AudioEncoder | None = None
        self._rows: dict[int, np.ndarray] = {}

    @property
    def llm(self) -> LlamaModel:
        if self._llm is None:
            bundle = self.bundle
            self._llm = LlamaModel(bundle.llm, self.n_ctx, self.threads)
            self.ids = {name: i for name, i in protocol_tokens(self._llm).ids.items()}
            self.banned = np.array([self.ids[n] for n in INPUT_ONLY], np.int64)
            self.stops = {self.ids[n] for n in (TURN_EOS, CHUNK_EOS, LISTEN, UNIT_CLOSE)}
            self.system = self._llm.tokenize(REFERENCE_SYSTEM_PROMPT, special=True)
        return self._llm

    @property
    def audio(self) -> AudioEncoder:
        if self._audio is None:
            bundle = self.bundle
            graph = open_graph("audio", bundle.graphs["audio"], None, "cpu", self.threads,
                               bundle.root / ".cache" / "trt")
            assert bundle.runtime.audio is not None  # open_bundle refuses a bundle without audio settings
            self._audio = AudioEncoder(graph, getattr(graph, "input_shapes", None) or {}, bundle.runtime.audio)
        return self._audio

    # ---- descriptors -----------------------------------------------------------------------------
    def frame(self, bgr: np.ndarray) -> np.ndarray:
        """A BGR uint8 frame -> its vision tokens (64, n_embd), the source view only."""
        return self.vision.encode(np.ascontiguousarray(bgr[:, :, ::-1]))

    def query(self, text: str) -> np.ndarray:
        """A question -> its token-embedding rows (n, n_embd); one clear sentence when it has no tokens."""
        ids = self.llm.tokenize(text)
        if not ids:
            raise ValueError("the question is empty; ask about something that was shown")
        need = [i for i in dict.fromkeys(ids) if i not in self._rows]
        if need:
            rows = token_rows(self.llm.path, need)
            if rows is None:
                raise ValueError(f"the token table of {self.llm.path.name} cannot be read here (its type is not "
                                 "one gguf-py dequantizes); use an F16 or Q8_0 LLM from the bundle")
            self._rows.update(zip(need, rows))
        return np.stack([self._rows[i] for i in ids])

    # ---- answering -------------------------------------------------------------------------------
    def answer(self, question: str, frames: list[tuple[np.ndarray, np.ndarray]]) -> str:
        """Greedy reply to `question` after the retrieved (vision tokens, int16 audio) pairs, oldest first."""
        llm = self.llm
        ids = self.ids
        llm.clear()
        llm.prefill_tokens(self.system, want_logits=False)
        for tokens, pcm in frames:
            llm.prefill_tokens([ids[UNIT_OPEN], ids[IMAGE_OPEN]], want_logits=False)
            llm.prefill_embeddings(np.asarray(tokens, np.float32), want_logits=False)
            llm.prefill_tokens([ids[IMAGE_CLOSE]], want_logits=False)
            self.audio.reset()
            heard = self.audio.encode(pcm.astype(np.float32) / 32768) if len(pcm) else np.zeros((0, 0))
            if len(heard):
                llm.prefill_embeddings(heard.astype(np.float32), want_logits=False)
        logits = llm.prefill_tokens(llm.tokenize(" " + question.strip()) or self.system[-1:])
        assert logits is not None
        out: list[int] = []
        for _ in range(self.max_tokens):
            row = np.array(logits, np.float32)
            row[self.banned] = -np.inf
            token = int(np.argmax(row))
            if token in self.stops:
                break
            out.append(token)
            logits, _ = llm.step(token)
        return b"".join(llm.piece(t) for t in out).decode("utf-8", "replace").strip()

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None
