"""A bundle directory in the exporter's manifest format: the tiny LLM GGUF and a tiny FP32 audio encoder.

The encoder is a small seeded torch module (log-mel chunk in, embeddings of
the LLM's width out) exported to ONNX, standing in for the real graph.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path


def write_tiny_bundle(out: Path, llm_gguf: Path, width: int = 256) -> Path:
    import torch
    from torch import nn

    torch.manual_seed(0)

    class TinyAudio(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(80, 128, 3, stride=2, padding=1)
            self.pool = nn.AvgPool1d(5, 5)
            self.proj = nn.Sequential(nn.Linear(128, width), nn.ReLU(), nn.Linear(width, width))

        def forward(self, mel: torch.Tensor) -> torch.Tensor:
            h = self.pool(nn.functional.gelu(self.conv(mel)))
            return self.proj(h.transpose(1, 2))

    (out / "llm").mkdir(parents=True, exist_ok=True)
    (out / "onnx").mkdir(exist_ok=True)
    shutil.copy(llm_gguf, out / "llm" / "llm-F16.gguf")
    model = TinyAudio().eval()
    torch.onnx.export(model, (torch.randn(1, 80, 100),), str(out / "onnx" / "audio-fp32.onnx"),
                      input_names=["mel"], output_names=["embeddings"],
                      dynamic_axes={"mel": {2: "frames"}, "embeddings": {1: "tokens"}}, opset_version=17, dynamo=False)
    manifest = {"format": "venus-bundle", "version": 1, "variant": "audio", "parts": [
        {"name": "llm-F16", "kind": "gguf", "role": "llm", "precision": "F16", "files": ["llm/llm-F16.gguf"]},
        {"name": "audio-fp32", "kind": "onnx", "role": "audio", "precision": "fp32", "files": ["onnx/audio-fp32.onnx"]},
    ]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return out
