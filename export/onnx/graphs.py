"""The ONNX graphs of a bundle: which torch module each is traced from, its inputs and dynamic axes."""

from __future__ import annotations

import pathlib
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from export.errors import ExportError
from export.onnx import storage
from export.torch_ref.audio import AudioEncoder
from export.torch_ref.token2wav_graphs import EstimatorStep, FlowEncoderChunk, HiftVocoder
from export.torch_ref.vision import VisionEncoder
from export.torch_ref.weights import TensorGetter

OPSET = 17  # LayerNormalization is native from 17; TensorRT 8.6+ and onnxruntime 1.14+ read it


@dataclass
class GraphSpec:
    """One graph to export: a module, example inputs (names in order) and its dynamic axes."""

    name: str
    module: nn.Module
    inputs: dict[str, torch.Tensor]
    outputs: list[str]
    dynamic: dict[str, dict[int, str]]
    sources: list[str] = field(default_factory=list)
    contract: dict[str, Any] = field(default_factory=dict)


class _Recorder:
    """A tensor getter that remembers which names were read (they key re-run detection)."""

    def __init__(self, get: TensorGetter) -> None:
        self.get, self.names = get, []

    def __call__(self, name: str) -> Any:
        self.names.append(name)
        return self.get(name)


def vision_spec(get: TensorGetter, config: dict[str, Any]) -> GraphSpec:
    rec = _Recorder(get)
    module = VisionEncoder(config).load(rec)
    patch = module.patch
    names = sorted(rec.names)
    return GraphSpec(
        "vision", module, {"pixels": torch.randn(1, 3, 6 * patch, 4 * patch)}, ["embeddings"],
        {"pixels": {2: "height", 3: "width"}}, names,
        {"input": f"one slice, normalised (x - 0.5) / 0.5, height and width multiples of {patch} "
                  f"and at most {module.side * patch} pixels",
         "output": f"{module.query_num} embeddings of width {module.embed_dim} per slice"})


def audio_spec(get: TensorGetter, config: dict[str, Any]) -> GraphSpec:
    rec = _Recorder(get)
    module = AudioEncoder(config).load(rec)
    past = torch.randn(len(module.layers), 2, 1, module.heads, 50, module.head_dim)
    return GraphSpec(
        "audio", module, {"mel": torch.randn(1, module.mels, 100), "past_kv": past},
        ["embeddings", "present_kv"],
        {"mel": {2: "frames"}, "past_kv": {4: "past"}, "embeddings": {1: "tokens"}, "present_kv": {4: "present"}},
        sorted(rec.names),
        {"chunk": "log-mel (80 bins, 100 frames per second) of one chunk; the first chunk starts with an "
                  "empty past_kv (past = 0)",
         "state": "feed present_kv back as past_kv for the next chunk; reset to empty before "
                  f"past + ceil(frames / 2) reaches {module.max_positions} positions",
         "output": f"floor(ceil(frames / 2) / {module.pool}) embeddings per chunk (10 per second)",
         "causality": "bidirectional inside a chunk, causal across chunks"})


def flow_specs(flow: nn.Module, hift: nn.Module) -> list[GraphSpec]:
    enc, dit = flow.encoder, flow.decoder.estimator
    width, att = enc.output_size(), enc.encoders[0].self_attn
    layers = len(enc.encoders) + len(enc.up_encoders)
    block = dit.blocks[0].attn
    depth, hidden = len(dit.blocks), dit.in_proj.out_features
    encoder = GraphSpec(
        "token2wav_encoder", FlowEncoderChunk(flow).eval(),
        {"token": torch.randint(0, flow.vocab_size, (1, 28)), "lookahead_pad": torch.zeros(1, 3, width),
         "spk_embedding": torch.randn(1, flow.spk_embed_affine_layer.in_features),
         "cnn_cache": torch.randn(1, width, 6), "att_cache": torch.randn(layers, 1, att.h, 20, 2 * att.d_k)},
        ["mu", "spk", "new_cnn_cache", "new_att_cache"],
        {"token": {1: "codes"}, "lookahead_pad": {1: "pad"}, "att_cache": {3: "cache"},
         "mu": {2: "frames"}, "new_att_cache": {3: "new_cache"}}, ["flow.pt"])
    step = GraphSpec(
        "token2wav_step", EstimatorStep(flow).eval(),
        {"x": torch.randn(1, 80, 50), "mu": torch.randn(1, 80, 50), "spk": torch.randn(1, 80),
         "cond": torch.randn(1, 80, 50), "t": torch.rand(1), "dt": torch.rand(1),
         "cnn_cache": torch.randn(depth, 2, 2 * hidden, 2),
         "att_cache": torch.randn(depth, 2, block.num_heads, 30, 2 * block.head_dim)},
        ["x_next", "new_cnn_cache", "new_att_cache"],
        {n: {2: "frames"} for n in ("x", "mu", "cond", "x_next")} | {"att_cache": {3: "cache"},
                                                                    "new_att_cache": {3: "new_cache"}},
        ["flow.pt"])
    vocoder = HiftVocoder(hift).eval()
    harmonics = hift.m_source.l_sin_gen.harmonic_num + 1
    voc = GraphSpec(
        "token2wav_vocoder", vocoder,
        {"mel": torch.randn(1, 80, 20), "cache_source": torch.randn(1, 1, 3840) * 0.1,
         "rand_ini": torch.rand(1, harmonics), "sine_noise": torch.randn(1, 20 * 480, harmonics)},
        ["speech", "source"],
        {"mel": {2: "frames"}, "cache_source": {2: "cached"}, "sine_noise": {1: "samples"},
         "speech": {1: "samples"}, "source": {2: "samples"}}, ["hift.pt"])
    return [encoder, step, voc]


def export_graph(spec: GraphSpec, path: pathlib.Path, opset: int = OPSET) -> None:
    """Trace `spec.module` to `path` (legacy exporter: fast and stable for these graphs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about shape-derived Python ints are expected
        try:
            torch.onnx.export(
                spec.module, tuple(spec.inputs.values()), str(path), input_names=list(spec.inputs),
                output_names=spec.outputs, dynamic_axes=spec.dynamic, opset_version=opset,
                do_constant_folding=True, dynamo=False)
        except Exception as exc:  # the exporter's own errors are long; keep the first line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ExportError(f"Exporting {spec.name} to ONNX failed: {first}.") from exc
    storage.save(storage.load(path), path)  # one file, or one file plus one side file past 2 GB

