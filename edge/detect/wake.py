"""Wake-word detection: "okay_nabu" trained here, and the microWakeWord models inside `pymicro-wakeword`.

The default "okay_nabu" is the classifier trained by export/train/wake_word.py
over openWakeWord's speech embedding (edge/detect/wake_trained.py); it hears
the voices the packaged model missed. The packaged microWakeWord (Apache-2.0)
models stay available, the packaged "okay nabu" as "okay_nabu_micro". For those,
audio is turned into 10 ms spectral features (TFLite Micro's audio frontend,
`pymicro-features`) and scored by a small streaming TFLite model every
three features; a word is heard when the mean of its last few scores
passes the cut-off the model ships with. One utterance makes several
scores in a row pass, so detections closer than `REFRACTORY_S` count once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRAINED = ("okay_nabu",)  # edge/assets/wake/
MICRO = {"okay_nabu_micro": "okay_nabu", "hey_jarvis": "hey_jarvis", "hey_mycroft": "hey_mycroft",
         "alexa": "alexa"}  # our name -> the model inside pymicro-wakeword 2.5
WAKE_WORDS = TRAINED + tuple(MICRO)
FEATURE_S = 0.010  # one feature per 10 ms of audio
REFRACTORY_S = 2.0  # a second detection within this long is the same utterance


class WakeWordError(ValueError):
    """A wake word that cannot be loaded; the message says why and what to choose instead."""


@dataclass
class WakeDetection:
    t_s: float  # stream time the word was recognized (just after its end), from the first sample fed
    probability: float  # the averaged score that passed the cut-off


def wake_name(name: str) -> str:
    """The model name for what a user typed ("Okay Nabu", "okay-nabu", "okay_nabu")."""
    key = "_".join(name.lower().replace("-", " ").replace("_", " ").split())
    if key not in WAKE_WORDS:
        raise WakeWordError(f"there is no wake word {name!r}; choose one of {', '.join(WAKE_WORDS)}.")
    return key


class WakeDetector:
    """Streams 16 kHz mono audio through one wake-word model; `feed` returns what it heard."""

    def __init__(self, name: str, cutoff: float | None = None) -> None:
        key = wake_name(name)
        self.name = key
        self.trained = None
        self.step_s = FEATURE_S
        if key in TRAINED:
            from edge.detect.wake_embedding import EmbeddingMissing
            from edge.detect.wake_trained import TrainedWake
            try:
                self.trained = TrainedWake(key)
            except EmbeddingMissing as exc:
                raise WakeWordError(str(exc)) from None
            except (OSError, ValueError, RuntimeError) as exc:
                raise WakeWordError(f"the wake word model {key} could not be loaded ({exc}); run "
                                    f"`python -m export.train.wake_word` to make it again.") from None
            self.word, self.step_s = self.trained.word, self.trained.step_s
            self.cutoff = self.trained.cutoff if cutoff is None else cutoff
            self.steps, self.last_t_s = 0, -REFRACTORY_S
            return
        try:
            from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model
        except ImportError:
            raise WakeWordError("wake words need pymicro-wakeword; install it with "
                                "`pip install 'venus-edge[models]'` or `pip install pymicro-wakeword`.") from None
        try:
            self.model = MicroWakeWord.from_builtin(Model(MICRO[key]))
        except (OSError, ValueError, RuntimeError) as exc:
            raise WakeWordError(f"the wake word model {key} could not be loaded ({exc}); reinstall "
                                f"pymicro-wakeword.") from None
        self._features_type = MicroWakeWordFeatures
        self.features = MicroWakeWordFeatures()
        self.word = self.model.wake_word  # as spoken: "Okay Nabu"
        self.cutoff = self.model.probability_cutoff if cutoff is None else cutoff
        self.steps = 0  # features made so far: the stream's clock in 10 ms steps
        self.last_t_s = -REFRACTORY_S

    def scores(self, audio: np.ndarray) -> np.ndarray:
        """The model's score for each step (`step_s`) the audio completes (the stream goes on)."""
        if self.trained is not None:
            return self.trained.scores(audio)
        pcm = (np.clip(np.asarray(audio, np.float32), -1.0, 1.0) * 32767).astype("<i2").tobytes()
        out = [self.model.process_streaming_prob(f) or 0.0 for f in self.features.process_streaming(pcm)]
        return np.asarray(out, np.float32)

    def feed(self, audio: np.ndarray) -> list[WakeDetection]:
        scores = self.scores(audio)
        found = []
        for i in np.flatnonzero(scores > self.cutoff):
            t = (self.steps + i + 1) * self.step_s
            if t - self.last_t_s >= REFRACTORY_S:
                self.last_t_s = t
                found.append(WakeDetection(t, float(scores[i])))
        self.steps += len(scores)
        return found

    def restart(self) -> None:
        """Forget the stream (a new recording follows): the model's inner state and the clock."""
        if self.trained is not None:
            self.trained.reset()
        else:
            self.model.reset()
            self.features = self._features_type()
        self.steps = 0
        self.last_t_s = -REFRACTORY_S

    def close(self) -> None:
        if self.trained is None:
            self.model.close()


def count_wakes(scores: np.ndarray, cutoff: float, step_s: float = FEATURE_S) -> int:
    """How many wakes a stream with these step scores makes at `cutoff` (the rule `feed` follows)."""
    n, last = 0, -REFRACTORY_S
    for i in np.flatnonzero(scores > cutoff):
        t = (i + 1) * step_s
        if t - last >= REFRACTORY_S:
            n, last = n + 1, t
    return n
