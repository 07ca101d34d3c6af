"""Inference backends: llama.cpp, onnxruntime, TensorRT, sampling, and finding packaged model files."""
