"""The embedded default voice: Piper VITS in onnxruntime, phonemes from espeak-ng."""
