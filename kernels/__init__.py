"""Hot numeric kernels called every chunk or frame (log-mel, resampling, image slicing), each with a NumPy reference."""
