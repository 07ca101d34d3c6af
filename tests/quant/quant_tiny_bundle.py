"""A bundle directory in the exporter's manifest format: the tiny LLM GGUF and tiny FP32 encoders.

The encoders are small seeded torch modules exported to ONNX, standing in for
the real graphs: audio (log-mel chunk in, 10 embeddings per second out) and
vision (pixels of a slice in, patch 14 with a position table, 64 embeddings
out), both at the LLM's width.
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

    class TinyVision(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.patch_embedding = nn.Conv2d(3, 32, 14, stride=14)
            self.position_embedding = nn.Embedding(32 * 32, 32)  # a 32 x 32 patch grid at most
            self.query = nn.Parameter(torch.randn(64, 32))
            self.proj = nn.Linear(32, width)

        def forward(self, pixels: torch.Tensor) -> torch.Tensor:
            h = self.patch_embedding(pixels).flatten(2).transpose(1, 2)  # (1, patches, 32)
            h = h + self.position_embedding(torch.arange(h.shape[1]))[None]
            attn = torch.softmax(self.query @ h[0].T / 32**0.5, dim=-1)  # 64 queries over the patches
            return self.proj(attn @ h[0])[None]

    (out / "llm").mkdir(parents=True, exist_ok=True)
    (out / "onnx").mkdir(exist_ok=True)
    shutil.copy(llm_gguf, out / "llm" / "llm-F16.gguf")
    model = TinyAudio().eval()
    torch.onnx.export(model, (torch.randn(1, 80, 100),), str(out / "onnx" / "audio-fp32.onnx"),
                      input_names=["mel"], output_names=["embeddings"],
                      dynamic_axes={"mel": {2: "frames"}, "embeddings": {1: "tokens"}}, opset_version=17, dynamo=False)
    torch.onnx.export(TinyVision().eval(), (torch.randn(1, 3, 112, 154),), str(out / "onnx" / "vision-fp32.onnx"),
                      input_names=["pixels"], output_names=["embeddings"],
                      dynamic_axes={"pixels": {2: "height", 3: "width"}}, opset_version=17, dynamo=False)
    manifest = {"format": "venus-bundle", "version": 1, "variant": "omni", "parts": [
        {"name": "llm-F16", "kind": "gguf", "role": "llm", "precision": "F16", "files": ["llm/llm-F16.gguf"]},
        {"name": "audio-fp32", "kind": "onnx", "role": "audio", "precision": "fp32", "files": ["onnx/audio-fp32.onnx"]},
        {"name": "vision-fp32", "kind": "onnx", "role": "vision", "precision": "fp32",
         "files": ["onnx/vision-fp32.onnx"]},
    ]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return out
