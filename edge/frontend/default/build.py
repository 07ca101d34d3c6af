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
    threads = max(1, int(config.get("threads", 1) or 1))
    s = Settings(threads=threads)
    if not config.get("realtime", True):
        s.llm_budget = None  # a virtual clock waits for the frontend: decode the same pieces on any machine
    for key in ("endpoint_ms", "max_reply_tokens", "tokens_per_chunk"):
        if config.get(key) is not None:
            setattr(s, key, int(config[key]))
    if config.get("asr"):
        s.asr = str(config["asr"])
    if config.get("rules") is not None:
        s.rules = bool(config["rules"])
    if config.get("number_reading") is not None:
        s.number_reading = bool(config["number_reading"])
    vad = SileroVad(threads)
    if config.get("asr_beam"):
        s.asr_beam = max(1, int(config["asr_beam"]))
    asr = Transcriber(threads, s.asr, beam_size=s.asr_beam)
    # `llm_gguf`: another chat model in its place (`bench chat --llm-gguf`, `bench answers --llm-gguf` compare them)
    gguf = Path(config["llm_gguf"]) if config.get("llm_gguf") else assemble(QWEN_GGUF)
    llm = DecisionModel(gguf, threads, n_ctx=int(config.get("context") or 2048),
                        kv_type=str(config.get("kv_type") or "f16"))
    return DefaultFrontend(vad, asr, llm, s)
