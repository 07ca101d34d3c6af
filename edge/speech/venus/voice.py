"""The Venus voice (`--voice bundle:DIR`): spoken tokens + LLM hidden states -> TTS codes -> token2wav -> 24 kHz.

The frontend sends each chunk's words with the hidden states of their tokens
(SpeakText carries them as a payload frame); the speech node calls
`synthesize_states` with the turn the words belong to and whether the turn
ends with them. The chunks of one turn share one TTS context and one token2wav
stream (tts.py, token2wav.py), so nothing restarts at a chunk's seam; a new
turn, or an interrupt (a new epoch, hence a new turn key), starts both afresh.
The last codes of a turn wait for its end (a window needs 28 codes), which
the node signals with the turn's last words or, when the turn ends without
words, with an empty call.

The voice prompt, TTS ids and normalisation are the exporter's (manifest and
voice/voice.npz): a bundle without them is refused. Text alone (another
frontend) is tokenized with the LLM's vocabulary and conditioned on the text
embedding only, which is a weaker voice; that is logged once. The voice runs
the whole bundle check itself (edge/bundle/check.py), as the frontend does: it
is its own process and trusts nothing it has not checked.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from edge.bundle.reader import BundleError, bundle_dir, open_bundle
from edge.backends.onnx import open_graph
from edge.bundle.settings import VenusSettings
from edge.speech.venus.token2wav import Token2Wav
from edge.speech.venus.tts import TTS

log = logging.getLogger(__name__)
REBUILD = "rebuild it with this venus-export build"
SECONDS_PER_CODE = 0.04  # 2 mel frames of 480 samples at 24 kHz


@dataclass
class ChunkCost:
    """What one chunk's words cost the voice: TTS codes, then token2wav windows (wall seconds)."""

    tts_s: float = 0.0
    codes: int = 0
    token2wav_s: float = 0.0
    samples: int = 0  # of the audio the chunk let out (a window runs once 29 codes are held)

    @property
    def tts_rtf(self) -> float | None:
        """TTS time per second of speech its codes stand for."""
        return self.tts_s / (self.codes * SECONDS_PER_CODE) if self.codes else None

    @property
    def token2wav_rtf(self) -> float | None:
        return self.token2wav_s / (self.samples / VenusVoice.sample_rate) if self.samples else None


class VenusVoice:
    name = "venus"
    sample_rate = 24000
    keeps_turns = True  # the speech node passes each chunk's turn and whether the turn ends there

    def __init__(self, root: Path, settings: VenusSettings) -> None:
        self.s = settings
        b = self.bundle = open_bundle(root, precision=settings.precision, encoder_precision=settings.encoder_precision,
                                      device=settings.device)
        if b.tts is None or b.tts_extras is None or b.runtime.tts is None:
            raise BundleError(f"the bundle has no TTS part or no TTS settings, so it cannot speak; {REBUILD}.")
        missing = [g for g in ("token2wav_encoder", "token2wav_step", "token2wav_vocoder") if g not in b.graphs]
        if missing:
            raise BundleError(f"the bundle lacks {', '.join(missing)}, so it cannot make audio; {REBUILD} and the "
                              "export extra installed.")
        if b.voice is None:
            raise BundleError(f"the bundle has no voice prompt (voice/voice.npz), so it cannot speak in a voice; "
                              f"{REBUILD} (--voice REF.wav picks the voice).")
        self._vocab = None
        self.tts = TTS(b.tts, b.tts_extras, b.runtime.tts, settings.tts_sampling, 2048, settings.threads,
                       settings.gpu_layers())
        cache = b.root / ".cache" / "trt"
        runners = [open_graph(g, b.graphs[g], b.engines.get(g), settings.device, settings.threads, cache)
                   for g in ("token2wav_encoder", "token2wav_step", "token2wav_vocoder")]
        self.t2w = Token2Wav(*runners, b.voice, b.noise, b.token2wav, settings.flow_steps, settings.sampling.seed)
        for _ in self.t2w.stream_codes(np.zeros(30, np.int64)):  # first-run costs of the graphs, paid now
            pass
        self.turn: Hashable | None = None  # the turn whose state the TTS and token2wav hold
        self.turn_codes: list[np.ndarray] = []  # codes of that turn, chunk by chunk
        self.codes_total = 0
        self.last_cost = ChunkCost()  # of the latest chunk, complete once its audio is all taken

    def _begin(self, turn: Hashable | None) -> None:
        self.tts.begin_turn()
        self.t2w.begin_turn()
        self.turn, self.turn_codes = turn, []

    def synthesize_states(self, text: str, token_ids: list[int], hidden: np.ndarray | None,
                          turn: Hashable | None = None, final: bool = True) -> Iterator[np.ndarray]:
        """One chunk's words -> the audio ready now. `turn` names the turn they belong to (the same for every
        chunk of it; None: these words are a turn of their own); `final`: the turn ends with them (empty
        words and `final` let out what the turn still holds)."""
        start = turn is None or turn != self.turn
        if start:
            self._begin(turn)
        cost = self.last_cost = ChunkCost()
        draws = self.s.tts_chunk_draws
        t0 = time.perf_counter()  # every speaking chunk runs the TTS, a wordless one too (the reference's budget)
        codes = self.tts.next_codes(token_ids, hidden, draws, 0 if start or final else draws)
        cost.tts_s, cost.codes = time.perf_counter() - t0, len(codes)
        self.codes_total += len(codes)
        self.turn_codes.append(codes)
        pieces = self.t2w.push_codes(codes, final)
        while True:
            t0 = time.perf_counter()
            audio = next(pieces, None)
            cost.token2wav_s += time.perf_counter() - t0
            if audio is None:
                break
            cost.samples += len(audio)
            yield audio
        if final:
            self.turn = None

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        if not text.strip():
            return
        if not getattr(self, "_warned", False):
            self._warned = True
            log.warning("venus voice: text without hidden states (not from the Venus frontend); speaking from "
                        "text embeddings only")
        yield from self.synthesize_states(text, self.vocab().tokenize(text), None)

    def vocab(self):
        """The LLM's vocabulary (a small context on the LLM GGUF), loaded when first needed."""
        if self._vocab is None:
            from edge.backends.llama import LlamaModel

            self._vocab = LlamaModel(self.bundle.llm, 256, 1)
        return self._vocab

    def close(self) -> None:
        self.tts.close()
        if self._vocab is not None:
            self._vocab.close()


def build(config: dict) -> VenusVoice:
    root = bundle_dir(config, "voice_arg")
    return VenusVoice(root, VenusSettings.load(root, config))
