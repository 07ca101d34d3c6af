"""The device's wake words served over Wyoming: `detect`, then audio, answered with `detection` / `not-detected`.

Home Assistant's satellites stream their microphone to a wake service and start
a pipeline on each `detection`. Each connection has detectors of its own (the
models keep streaming state), fed the 16 kHz audio as it arrives.
"""
from __future__ import annotations

import numpy as np
from wyoming.info import Attribution, WakeModel, WakeProgram
from wyoming.wake import Detection

from edge.detect.wake import WAKE_WORDS, WakeDetector, wake_name

PHRASES = {"okay_nabu": "okay nabu", "okay_nabu_micro": "okay nabu", "hey_jarvis": "hey jarvis",
           "hey_mycroft": "hey mycroft", "alexa": "alexa"}
MICRO = Attribution(name="Kevin Ahrendt (microWakeWord)", url="https://github.com/kahrendt/microWakeWord")
TRAINED = Attribution(name="venus-edge (over openWakeWord's speech embedding)",
                      url="https://github.com/dscripka/openWakeWord")


def wake_program(attribution: Attribution) -> WakeProgram:
    return WakeProgram(name="venus-edge-wake", attribution=attribution, installed=True, version=None,
                       description="The device's wake words",
                       models=[WakeModel(name=n, attribution=TRAINED if n == "okay_nabu" else MICRO, installed=True,
                                         version=None, description=PHRASES[n], languages=["en"], phrase=PHRASES[n])
                               for n in WAKE_WORDS])


class WakeListening:
    """One connection's wake-word stream: the words asked for, each with its own detector."""

    def __init__(self, names: list[str] | None) -> None:
        keys = [wake_name(n) for n in names] if names else list(WAKE_WORDS)
        self.detectors = [WakeDetector(k) for k in dict.fromkeys(keys)]
        self.heard = 0

    def feed(self, pcm16: bytes) -> list[Detection]:
        # 16 kHz mono 16-bit: the handler converts every stream to it
        audio = np.frombuffer(pcm16, "<i2").astype(np.float32) / 32768.0
        out = []
        for d in self.detectors:
            for hit in d.feed(audio):
                out.append(Detection(name=d.name, timestamp=int(hit.t_s * 1000)))
        self.heard += len(out)
        return out

    def close(self) -> None:
        for d in self.detectors:
            d.close()

