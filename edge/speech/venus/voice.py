"""The Venus voice (`--voice bundle:DIR`): spoken tokens + LLM hidden states -> TTS codes -> token2wav -> 24 kHz.

The frontend sends each chunk's words with the hidden states of their tokens
(SpeakText carries them as a payload frame); the speech node calls
`synthesize_states`. Text alone (another frontend) is tokenized with the LLM's
vocabulary and conditioned on the text embedding only, which is a weaker voice;
that is logged once. The frontend checks the bundle's hashes; the voice
checks sizes (the same files would otherwise be hashed twice).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator

import numpy as np

from edge.bundle.reader import BundleError, bundle_dir, open_bundle
from edge.backends.onnx import open_graph
from edge.bundle.settings import VenusSettings
from edge.speech.venus.token2wav import Token2Wav
from edge.speech.venus.tts import TTS

log = logging.getLogger("edge.venus")


class VenusVoice:
    name = "venus"
    sample_rate = 24000

    def __init__(self, root: Path, settings: VenusSettings) -> None:
        self.s = settings
        b = self.bundle = open_bundle(root, precision=settings.precision, encoder_precision=settings.encoder_precision,
                                      device=settings.device, verify_hashes=False)
        if b.tts is None or b.tts_extras is None:
            raise BundleError("the bundle has no TTS part, so it cannot speak; rebuild it with venus-export build.")
        missing = [g for g in ("token2wav_encoder", "token2wav_step", "token2wav_vocoder") if g not in b.graphs]
        if missing:
            raise BundleError(f"the bundle lacks {', '.join(missing)}, so it cannot make audio; rebuild it with the "
                              "export extra installed.")
        if b.voice is None and b.noise is None:
            raise BundleError("the bundle has neither a token2wav voice file nor its sampler noise, so it cannot "
                              "make audio; rebuild it with this venus-export.")
        if b.voice is None:
            log.warning("venus voice: the bundle has no voice prompt (token2wav-voice part), so it speaks with a "
                        "neutral built-in prompt that will not sound like the reference voice.")
        tc = b.config.get("tts_config") or {}
        self._vocab = None
        self.tts = TTS(b.tts, b.tts_extras, tc.get("text_eos_token_id"), tc.get("audio_bos_token_id"),
                       settings.tts_sampling, 2048, settings.threads, settings.gpu_layers(),
                       bool(tc.get("normalize_projected_hidden", True)), fallback=self._tts_token_ids)
        cache = b.root / ".cache" / "trt"
        runners = [open_graph(g, b.graphs[g], b.engines.get(g), settings.device, settings.threads, cache)
                   for g in ("token2wav_encoder", "token2wav_step", "token2wav_vocoder")]
        self.t2w = Token2Wav(*runners, b.voice, b.noise, b.token2wav, settings.flow_steps, settings.sampling.seed)
        for _ in self.t2w.stream_codes(np.zeros(30, np.int64)):  # first-run costs of the graphs, paid now
            pass
        self.codes_total = 0

    def synthesize_states(self, text: str, token_ids: list[int], hidden: np.ndarray | None) -> Iterator[np.ndarray]:
        if not token_ids:
            return
        cap = max(1, self.s.tts_codes_per_token * len(token_ids))
        codes = self.tts.codes(token_ids, hidden, cap)
        self.codes_total += len(codes)
        yield from self.t2w.stream_codes(codes)

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

    def _tts_token_ids(self) -> tuple[int, int]:
        ids = [self.vocab().tokenize(t, special=True) for t in ("<|tts_eos|>", "<|tts_bos|>")]
        if any(len(i) != 1 for i in ids):
            raise BundleError("the bundle names no TTS text-end/audio-begin ids and its vocabulary lacks "
                              "<|tts_eos|> and <|tts_bos|>; rebuild it from a MiniCPM-o checkpoint.")
        return ids[0][0], ids[1][0]

    def close(self) -> None:
        self.tts.close()
        if self._vocab is not None:
            self._vocab.close()


def build(config: dict) -> VenusVoice:
    root = bundle_dir(config, "voice_arg")
    return VenusVoice(root, VenusSettings.load(root, config))
