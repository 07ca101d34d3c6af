"""Recorded media of a chunk stream turned into the embedding segments the LLM is prefilled with.

Per chunk, in the reference order: `<unit>` (and the heard text), `<image>` +
the frame's vision embeddings + `</image>`, then the audio embeddings. Each
encoder runs once over the stream in chunk order (the audio encoder carries
its streaming cache from chunk to chunk).
"""
from __future__ import annotations

from pathlib import Path

from quant.chunks import ChunkRecord, ChunkStream, Segment

BEST_FIRST = ("fp32", "fp16", "int8")


def best_graph(graphs: dict[str, Path]) -> Path | None:
    """The highest-precision graph of a part."""
    return next((graphs[p] for p in BEST_FIRST if p in graphs), None)


def llm_width(gguf_path: Path) -> int:
    from gguf import GGUFReader

    r = GGUFReader(str(gguf_path))
    arch = r.fields["general.architecture"].contents()
    return int(r.fields[f"{arch}.embedding_length"].contents())


def embed_media(stream: ChunkStream, width: int, audio: Path | None = None, vision: Path | None = None,
                threads: int = 1) -> ChunkStream:
    """A copy of the stream with recorded audio and frames as embedding segments after each `<unit>`."""
    from quant.audio_embed import AudioEmbedder
    from quant.vision_embed import VisionEmbedder

    has_audio = audio is not None and any(c.audio is not None and len(c.audio) for c in stream.chunks)
    has_frames = vision is not None and any(c.frame is not None for c in stream.chunks)
    if not (has_audio or has_frames):
        return stream
    a_enc = AudioEmbedder(audio, threads) if has_audio else None
    v_enc = VisionEmbedder(vision, threads) if has_frames else None
    chunks = []
    for c in stream.chunks:
        media: list[Segment] = []
        if v_enc is not None and c.frame is not None:
            media += ["<image>", v_enc(c.frame), "</image>"]
        if a_enc is not None and c.audio is not None and len(c.audio):
            media.append(a_enc(c.audio))
        for seg in media:
            if not isinstance(seg, str) and seg.shape[-1] != width:
                return ChunkStream(stream.source + f"; media not embedded (an encoder gives width {seg.shape[-1]}, "
                                   f"the LLM {width})", stream.chunks)
        inputs = list(c.inputs)
        at = next((j + 1 for j, s in enumerate(inputs) if isinstance(s, str) and s.startswith("<unit>")), len(inputs))
        inputs[at:at] = media
        chunks.append(ChunkRecord(c.index, inputs, c.output, c.close, c.audio, c.frame))
    used = [p.name for p, on in ((audio, has_audio), (vision, has_frames)) if on and p is not None]
    return ChunkStream(stream.source + " + media through " + ", ".join(used), chunks)
