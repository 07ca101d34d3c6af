"""Quantization recipes, quality metrics and precision sweeps.

`venus-quant sweep` quantizes the LLM to each GGUF type asked, measures size,
speed and memory, and compares every precision with the highest-precision
reference: next-token distributions (KL divergence, top-1 agreement),
perplexity, and the per-chunk listen/speak and delegate decisions replayed
from a runtime journal. Encoders are swept over FP32/FP16/INT8 ONNX graphs.
"""
