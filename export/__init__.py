"""Export: a Realtime-Venus checkpoint to a bundle (GGUF LLM and TTS, ONNX media parts, manifest).

Entry point: `venus-export` (export.cli). Modules: checkpoint (lazy reader), names and transforms
(tables), llm_gguf / tts_gguf (writers), gguf_types (the GGUF type table), quantize, build, verify, bench,
tiny (test checkpoints).
"""
