"""Speech decoders by name: `espeak`, `null`, `piper` (the embedded default voice), `bundle:DIR` (Venus)."""
from __future__ import annotations

from edge.plugins import build_plugin
from edge.speech.base import SpeechDecoder

BUILDERS = {"piper": "edge.speech.piper.voice", "bundle": "edge.speech.venus.voice"}


def build_decoder(spec: str, config: dict) -> SpeechDecoder:
    kind, _, arg = spec.partition(":")
    if kind == "espeak":
        from edge.speech.espeak import EspeakDecoder
        return EspeakDecoder(arg or "en-us")
    if kind == "null":
        from edge.speech.espeak import NullDecoder
        return NullDecoder()
    if kind in BUILDERS:
        return build_plugin(BUILDERS[kind], f"{kind} voice", {**config, "voice_arg": arg})
    raise ValueError(f"unknown voice {spec!r}; use espeak, piper, null or bundle:DIR")
