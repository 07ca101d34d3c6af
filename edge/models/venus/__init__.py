"""The Venus bundle runtime: bundle loading, backends (llama.cpp, onnxruntime, TensorRT), the chunk protocol."""
