"""The log-mel front end and the streaming audio encoder driver used to replay recorded chunks."""
from __future__ import annotations

import numpy as np
import pytest

from quant.audio_embed import AudioEmbedder, log_mel


def test_log_mel_matches_faster_whisper():
    fw = pytest.importorskip("faster_whisper.feature_extractor")
    rng = np.random.default_rng(0)
    t = np.arange(16000) / 16000
    audio = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(16000)).astype(np.float32)
    want = fw.FeatureExtractor(feature_size=80)(audio, padding=0)
    got = log_mel(audio)
    assert got.shape == (80, 100)
    assert np.allclose(got, want[:, : got.shape[1]], atol=1e-4)


def _streaming_graph(path, max_positions: int = 120) -> None:
    """mel (1, 80, F) + past_kv (1, 2, 1, 1, P, 4) -> embeddings (1, F/10, 8) + present_kv (P + ceil(F/2))."""
    import torch
    from torch import nn

    class Streaming(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(80, 4, 3, stride=2, padding=1)
            self.embed_positions = nn.Embedding(max_positions, 4)
            self.out = nn.Linear(4, 8)

        def forward(self, mel, past_kv):
            h = self.conv(mel).transpose(1, 2)  # (1, T, 4)
            h = h + self.embed_positions(torch.arange(h.shape[1]) + past_kv.shape[4])[None]
            kv = h[:, None, None, None].expand(1, 2, 1, 1, h.shape[1], 4)
            present = torch.cat([past_kv, kv], dim=4)
            ctx = present.mean(dim=4)[:, 0, 0, 0]  # (1, 4): depends on the whole cache
            pooled = nn.functional.avg_pool1d(h.transpose(1, 2), 5, 5).transpose(1, 2)
            return self.out(pooled + ctx[:, None]), present

    torch.manual_seed(0)
    torch.onnx.export(Streaming().eval(), (torch.randn(1, 80, 100), torch.zeros(1, 2, 1, 1, 0, 4)), str(path),
                      input_names=["mel", "past_kv"], output_names=["embeddings", "present_kv"],
                      dynamic_axes={"mel": {2: "frames"}, "past_kv": {4: "past"}, "embeddings": {1: "tokens"},
                                    "present_kv": {4: "present"}}, opset_version=17, dynamo=False)


def test_streaming_cache_is_carried_and_reset(tmp_path):
    _streaming_graph(tmp_path / "a.onnx", max_positions=120)
    emb = AudioEmbedder(tmp_path / "a.onnx")
    assert emb.max_positions == 120
    rng = np.random.default_rng(1)
    chunks = [0.1 * rng.standard_normal(16000).astype(np.float32) for _ in range(3)]
    first = emb(chunks[0])
    assert first.shape == (10, 8) and emb.past.shape[4] == 50
    emb(chunks[1])
    assert emb.past.shape[4] == 100
    emb(chunks[2])  # 100 + 50 would pass 120 positions: the cache starts again
    assert emb.past.shape[4] == 50
    again = AudioEmbedder(tmp_path / "a.onnx")(chunks[0])
    assert np.allclose(again, first)  # a fresh stream gives the same first chunk


def test_frame_pixels_fit_the_patch_grid():
    from quant.vision_embed import frame_pixels

    frame = np.random.default_rng(0).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    x = frame_pixels(frame, 14, 448)
    assert x.shape == (1, 3, 112, 154) and x.dtype == np.float32
    assert -1.0 <= x.min() and x.max() <= 1.0
    big = frame_pixels(np.zeros((1080, 1920, 3), np.uint8), 14, 448)
    assert big.shape[2] <= 448 and big.shape[3] <= 448 and big.shape[2] % 14 == 0 and big.shape[3] % 14 == 0
    assert np.all(big == -1.0)
