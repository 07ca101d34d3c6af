"""The default frontend built from the session's settings: its three models loaded, its options set."""
from __future__ import annotations

from pathlib import Path

from edge.backends.locate import QWEN_GGUF, assemble
from edge.detect.asr import Transcriber
from edge.detect.vad import SileroVad
from edge.frontend.default.frontend import DefaultFrontend
from edge.frontend.default.llm import DecisionModel
from edge.frontend.default.settings import Settings


def build(config: dict) -> DefaultFrontend:
    s = Settings.from_config(config)
    vad = SileroVad(s.threads)
    asr = Transcriber(s.threads, s.asr, beam_size=s.asr_beam)
    gguf = Path(s.llm_gguf) if s.llm_gguf else assemble(QWEN_GGUF)
    llm = DecisionModel(gguf, s.threads, n_ctx=s.context, kv_type=s.kv_type)
    return DefaultFrontend(vad, asr, llm, s)
