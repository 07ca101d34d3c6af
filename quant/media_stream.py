"""Recorded media of a chunk stream turned into the embedding segments the LLM is prefilled with.

The encoders are the runtime's own (edge/frontend/venus/encoders.py: kernels/logmel.py's
log-mel with the runtime's chunk padding, the streaming audio cache and its reset,
kernels/image.py's slicing), built from the checkpoint config as the Venus
frontend builds them and run on onnxruntime's CPU provider: a sweep measures the
embeddings the device computes. Per chunk, in the runtime's order: `<unit>` (and
the heard text), `<image>` + every slice's embeddings + `</image>`, then the audio
embeddings. Each encoder runs once over the stream in chunk order.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edge.backends.onnx import OnnxGraph
from edge.bundle.runtime import RuntimeConfig, read_runtime
from edge.bundle.settings import VenusSettings
from edge.formats import ONNX_PRECISIONS
from edge.frontend.venus.encoders import AudioEncoder, VisionEncoder
from edge.protocol.tokens import IMAGE_CLOSE, IMAGE_OPEN, UNIT_OPEN
from quant.chunks import ChunkRecord, ChunkStream, Segment

BEST_FIRST = ONNX_PRECISIONS


def best_graph(graphs: dict[str, Path]) -> Path | None:
    """The highest-precision graph of a part."""
    return next((graphs[p] for p in BEST_FIRST if p in graphs), None)


def llm_width(gguf_path: Path) -> int:
    from gguf import GGUFReader

    r = GGUFReader(str(gguf_path))
    arch = r.fields["general.architecture"].contents()
    return int(r.fields[f"{arch}.embedding_length"].contents())


class _Recording:
    """A graph runner that keeps every feed the encoder gives it (the inputs of an INT8 calibration)."""

    def __init__(self, graph: OnnxGraph, into: list[dict[str, np.ndarray]]) -> None:
        self.graph, self.into, self.input_shapes = graph, into, graph.input_shapes

    def __call__(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.into.append({k: np.array(v) for k, v in feed.items()})
        return self.graph(feed)


def _runner(graph: Path, threads: int, record: list | None):
    g = OnnxGraph(graph, "cpu", threads)
    return g if record is None else _Recording(g, record)


def _facts(runtime: dict) -> RuntimeConfig:
    """The encoder facts of a manifest-style `runtime` section, read as the device reads them (MiniCPM-o's
    defaults, as the exporter resolves them, when there is none)."""
    if not runtime:
        from export.runtime_config import _audio, _vision

        runtime = {"audio": _audio({}), "vision": _vision({})}
    return read_runtime({"runtime": runtime})


def audio_encoder(graph: Path, config: dict, threads: int = 1, record: list | None = None) -> AudioEncoder:
    """The runtime's streaming audio encoder over `graph`; `config` is a bundle's `runtime` section (quant's
    Source.config). With `record`, every feed it gives the graph is appended there."""
    facts = _facts(config).audio
    if facts is None:
        raise ValueError("the runtime section has no audio facts, so the audio encoder cannot be sized")
    run = _runner(graph, threads, record)
    return AudioEncoder(run, run.input_shapes, facts)


def vision_encoder(graph: Path, config: dict, threads: int = 1, record: list | None = None,
                   max_slices: int | None = VenusSettings.max_slices) -> VisionEncoder:
    """The runtime's vision encoder over `graph`, slicing a frame as the Venus frontend does by default
    (`max_slices` None: the checkpoint's own limit)."""
    vf = _facts(config).vision
    if vf is None:
        raise ValueError("the runtime section has no vision facts, so frames cannot be sliced")
    return VisionEncoder(_runner(graph, threads, record), vf.scale_resolution, vf.patch_size,
                         max_slices or vf.max_slices, vf.max_side)


def _not_embedded(stream: ChunkStream, why: str) -> ChunkStream:
    return ChunkStream(stream.source + f"; media not embedded ({why})", stream.chunks)


def embed_media(stream: ChunkStream, width: int, audio: Path | None = None, vision: Path | None = None,
                config: dict | None = None, threads: int = 1) -> ChunkStream:
    """A copy of the stream with recorded audio and frames as embedding segments after each `<unit>`."""
    config = config or {}
    has_audio = audio is not None and any(c.audio is not None and len(c.audio) for c in stream.chunks)
    has_frames = vision is not None and any(c.frame is not None for c in stream.chunks)
    if not (has_audio or has_frames):
        return stream
    try:
        a_enc = audio_encoder(audio, config, threads) if has_audio else None
        v_enc = vision_encoder(vision, config, threads) if has_frames else None
    except (ValueError, RuntimeError) as e:  # a graph the runtime could not run either
        return _not_embedded(stream, str(e))
    chunks = []
    session = stream.chunks[0].session if stream.chunks else 0
    for c in stream.chunks:
        if c.session != session and a_enc is not None:  # a new recorded session: the runtime's cache started empty
            a_enc.reset()
        session = c.session
        media: list[Segment] = []
        try:
            if v_enc is not None and c.frame is not None:
                media += [IMAGE_OPEN, v_enc.encode(c.frame), IMAGE_CLOSE]
            if a_enc is not None and c.audio is not None and len(c.audio):
                media.append(a_enc.encode(c.audio))
        except (ValueError, RuntimeError) as e:
            return _not_embedded(stream, f"chunk {c.index}: {e}")
        for seg in media:
            if not isinstance(seg, str) and seg.shape[-1] != width:
                return _not_embedded(stream, f"an encoder gives width {seg.shape[-1]}, the LLM {width}")
        inputs = list(c.inputs)
        at = next((j + 1 for j, s in enumerate(inputs) if isinstance(s, str) and s.startswith(UNIT_OPEN)), len(inputs))
        inputs[at:at] = media
        chunks.append(ChunkRecord(c.index, inputs, c.output, c.close, c.audio, c.frame, c.session))
    used = [p.name for p, on in ((audio, has_audio), (vision, has_frames)) if on and p is not None]
    return ChunkStream(stream.source + " + media through " + ", ".join(used), chunks)
