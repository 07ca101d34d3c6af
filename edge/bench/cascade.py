"""The plain cascade a user would otherwise run locally, as the peer of `venus-edge bench voice`.

Home Assistant's Assist pipeline, on this device's own models: a voice-activity
segmenter waits for 0.7 s of silence after the speech (its default), whisper reads
the whole utterance, the llama.cpp model writes the whole answer, and Piper
synthesizes it before it plays; each stage starts when the one before it ends.
Latency per question, from the end of the user's speech to the first sample
played: the segmenter's silence plus the wall time of the three stages, run one
after the other on the same questions' audio as the session heard.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

ENDPOINT_SILENCE_S = 0.7  # Assist's segmenter: the silence that ends a command
SYSTEM = "You are a voice assistant. Answer the question in one short sentence."


@dataclass
class CascadeTurn:
    question: str
    heard: str
    reply: str
    asr_ms: float
    llm_ms: float
    tts_ms: float

    @property
    def latency_ms(self) -> float:
        return ENDPOINT_SILENCE_S * 1e3 + self.asr_ms + self.llm_ms + self.tts_ms


def run_cascade(audio: np.ndarray, spans: list[tuple[str, float, float]], threads: int, max_tokens: int,
                asr_model: str = "base", rate: int = 16000) -> list[CascadeTurn]:
    """Each (question, start s, end s) of `audio` through whisper, the LLM and Piper, timed stage by stage."""
    from edge.backends.locate import QWEN_GGUF, assemble
    from edge.detect.asr import Transcriber
    from edge.frontend.default.llm import DecisionModel
    from edge.speech.piper.voice import PiperVoice

    asr = Transcriber(threads, asr_model, beam_size=5)  # the frontend's own reading of a turn
    llm = DecisionModel(assemble(QWEN_GGUF), threads).llm
    voice = PiperVoice(threads=threads)
    out = []
    try:
        for question, start, end in spans:
            said = audio[int(start * rate):int((end + ENDPOINT_SILENCE_S) * rate)]
            t0 = time.perf_counter()
            heard = asr.transcribe(said).strip()
            t1 = time.perf_counter()
            answer = llm.create_chat_completion(messages=[{"role": "system", "content": SYSTEM},
                                                          {"role": "user", "content": heard or "..."}],
                                                max_tokens=max_tokens, temperature=0.0)
            reply = str(answer["choices"][0]["message"]["content"] or "").strip()
            t2 = time.perf_counter()
            for _ in voice.synthesize(reply or "Sorry?"):  # the whole answer, before it plays
                pass
            t3 = time.perf_counter()
            out.append(CascadeTurn(question, heard, reply, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3))
    finally:
        llm.close()
    return out
