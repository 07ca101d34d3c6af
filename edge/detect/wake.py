"""Wake-word detection with the microWakeWord models that ship inside `pymicro-wakeword` (Apache-2.0).

Audio is turned into 10 ms spectral features (TFLite Micro's audio frontend,
`pymicro-features`) and scored by a small streaming TFLite model every
three features; a word is heard when the mean of its last few scores
passes the cut-off the model ships with. One utterance makes several
scores in a row pass, so detections closer than `REFRACTORY_S` count once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WAKE_WORDS = ("okay_nabu", "hey_jarvis", "hey_mycroft", "alexa")  # the models inside pymicro-wakeword 2.5
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
        try:
            from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model
        except ImportError:
            raise WakeWordError("wake words need pymicro-wakeword; install it with "
                                "`pip install 'venus-edge[models]'` or `pip install pymicro-wakeword`.") from None
        try:
            self.model = MicroWakeWord.from_builtin(Model(key))
        except (OSError, ValueError, RuntimeError) as exc:
            raise WakeWordError(f"the wake word model {key} could not be loaded ({exc}); reinstall "
                                f"pymicro-wakeword.") from None
        self._features_type = MicroWakeWordFeatures
        self.features = MicroWakeWordFeatures()
        self.name = key
        self.word = self.model.wake_word  # as spoken: "Okay Nabu"
        self.cutoff = self.model.probability_cutoff if cutoff is None else cutoff
        self.steps = 0  # features made so far: the stream's clock in 10 ms steps
        self.last_t_s = -REFRACTORY_S

    def scores(self, audio: np.ndarray) -> np.ndarray:
        """The model's averaged score for each 10 ms step the audio completes (the stream goes on)."""
        pcm = (np.clip(np.asarray(audio, np.float32), -1.0, 1.0) * 32767).astype("<i2").tobytes()
        out = [self.model.process_streaming_prob(f) or 0.0 for f in self.features.process_streaming(pcm)]
        return np.asarray(out, np.float32)

    def feed(self, audio: np.ndarray) -> list[WakeDetection]:
        scores = self.scores(audio)
        found = []
        for i in np.flatnonzero(scores > self.cutoff):
            t = (self.steps + i + 1) * FEATURE_S
            if t - self.last_t_s >= REFRACTORY_S:
                self.last_t_s = t
                found.append(WakeDetection(t, float(scores[i])))
        self.steps += len(scores)
        return found

    def restart(self) -> None:
        """Forget the stream (a new recording follows): the model's inner state and the clock."""
        self.model.reset()
        self.features = self._features_type()
        self.steps = 0
        self.last_t_s = -REFRACTORY_S

    def close(self) -> None:
        self.model.close()


def count_wakes(scores: np.ndarray, cutoff: float) -> int:
    """How many wakes a stream with these step scores makes at `cutoff` (the rule `feed` follows)."""
    n, last = 0, -REFRACTORY_S
    for i in np.flatnonzero(scores > cutoff):
        t = (i + 1) * FEATURE_S
        if t - last >= REFRACTORY_S:
            n, last = n + 1, t
    return n
