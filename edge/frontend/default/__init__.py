"""The embedded default frontend: small packaged models (VAD, whisper, Qwen2.5 0.5B) speaking the protocol."""
