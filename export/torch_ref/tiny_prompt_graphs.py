"""Tiny stand-ins for the checkpoint's two voice-prompt graphs, with the real files' names and interfaces.

A real checkpoint ships them as ONNX in assets/token2wav (CHECKPOINT.md):
- campplus.onnx: a Kaldi 80-bin filterbank (1, frames, 80), mean-normalised over time -> a (1, 192) speaker vector;
- speech_tokenizer_v2_25hz.onnx: a 128-bin Whisper log-mel (1, 128, frames) and its length (1,) int32 ->
  (1, codes) speech codes at 25 a second (two stride-2 stages) from a 3^8 = 6561-entry finite scalar quantiser.
The tiny ones keep those interfaces (statistics pooling, strided convolutions, the same quantiser) at small
widths with seeded weights, so `venus-export build` makes a voice prompt from a tiny checkpoint the same way.
"""

from __future__ import annotations

import pathlib
import warnings

import torch
from torch import nn

SPEAKER_GRAPH = "campplus.onnx"
TOKENIZER_GRAPH = "speech_tokenizer_v2_25hz.onnx"
LEVELS, DIMS = 3, 8  # 3 ** 8 = 6561 codes, the flow model's vocabulary


class TinySpeaker(nn.Module):
    """Filterbank frames -> speaker vector: a convolution, mean and deviation over time, a projection."""

    def __init__(self, bins: int = 80, width: int = 32, out: int = 192) -> None:
        super().__init__()
        self.conv = nn.Conv1d(bins, width, 3, padding=1)
        self.proj = nn.Linear(2 * width, out)

    def forward(self, fbank: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.conv(fbank.transpose(1, 2)))
        stats = torch.cat([h.mean(dim=2), h.std(dim=2)], dim=1)
        return self.proj(stats)


class TinyTokenizer(nn.Module):
    """Log-mel frames -> codes: two stride-2 convolutions, a projection to 8 dims, each rounded to 3 levels."""

    def __init__(self, mels: int = 128, width: int = 32) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(mels, width, 3, stride=2, padding=1)
        self.conv2 = nn.Conv1d(width, width, 3, stride=2, padding=1)
        self.proj = nn.Linear(width, DIMS)
        self.register_buffer("place", LEVELS ** torch.arange(DIMS), persistent=False)

    def forward(self, feats: torch.Tensor, feats_length: torch.Tensor) -> torch.Tensor:
        h = nn.functional.gelu(self.conv2(nn.functional.gelu(self.conv1(feats)))).transpose(1, 2)
        levels = torch.round(torch.tanh(3.0 * self.proj(h))).long() + 1  # {0, 1, 2} per dimension
        codes = (levels * self.place).sum(dim=-1)
        n = (feats_length.long() + 3) // 4  # the codes of the valid frames
        return codes[:, : n[0]]


def write_tiny_prompt_graphs(out_dir: pathlib.Path, seed: int) -> None:
    torch.manual_seed(seed)
    speaker, tokenizer = TinySpeaker().eval(), TinyTokenizer().eval()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about the length slice are expected
        torch.onnx.export(speaker, (torch.randn(1, 120, 80),), str(out_dir / SPEAKER_GRAPH), input_names=["input"],
                          output_names=["output"], dynamic_axes={"input": {1: "frames"}}, opset_version=17,
                          dynamo=False)
        feats = torch.randn(1, 128, 200)
        torch.onnx.export(tokenizer, (feats, torch.tensor([200], dtype=torch.int32)), str(out_dir / TOKENIZER_GRAPH),
                          input_names=["feats", "feats_length"], output_names=["indices"],
                          dynamic_axes={"feats": {2: "frames"}, "indices": {1: "codes"}}, opset_version=17,
                          dynamo=False)
