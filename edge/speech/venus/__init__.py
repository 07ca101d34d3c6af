"""The Venus voice: TTS codes on llama.cpp, then token2wav over ONNX graphs."""
