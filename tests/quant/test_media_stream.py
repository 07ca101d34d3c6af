"""The sweep's media embeddings are the device's: the Venus frontend's own encoders give the same numbers."""
from __future__ import annotations

import numpy as np
import pytest

from edge.protocol.tokens import IMAGE_CLOSE, IMAGE_OPEN
from quant.journal_stream import stream_from_journal
from quant.media_stream import embed_media, llm_width, vision_encoder


@pytest.fixture(scope="module")
def frontend(omni_bundle):
    from edge.bundle.settings import VenusSettings
    from edge.frontend.venus.frontend import VenusFrontend

    f = VenusFrontend(omni_bundle, VenusSettings(n_ctx=512, kv_high=500, kv_low=400, device="cpu"))
    yield f
    f.close()


def test_journal_media_embed_as_the_frontend_embeds_them(omni_bundle, journal, frontend):
    raw = stream_from_journal(journal)
    graphs = frontend.bundle.graphs
    stream = embed_media(raw, llm_width(frontend.bundle.llm), graphs["audio"], graphs["vision"],
                         frontend.bundle.manifest["runtime"])
    assert "media not embedded" not in stream.source
    # the frontend's audio encoder carries its cache over the chunks in order, as the sweep's does
    frontend.audio.reset()
    frames = 0
    for raw_chunk, chunk in zip(raw.chunks, stream.chunks):
        media = chunk.inputs[len(raw_chunk.inputs):]  # inserted after the chunk's `<unit>`, its last input
        if raw_chunk.frame is not None:
            assert media[0] == IMAGE_OPEN and media[2] == IMAGE_CLOSE
            assert np.array_equal(media[1], frontend.vision.encode(raw_chunk.frame))
            frames += 1
        assert np.array_equal(media[-1], frontend.audio.encode(raw_chunk.audio))
    assert frames >= len(raw.chunks) - 1


def test_a_camera_frame_is_sliced_as_on_the_device(omni_bundle, frontend):
    frame = np.random.default_rng(0).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    got = vision_encoder(frontend.bundle.graphs["vision"], frontend.bundle.manifest["runtime"]).encode(frame)
    assert len(got) == 64  # one slice a frame by default, as the reference streams (64 embeddings)
    assert np.array_equal(got, frontend.vision.encode(frame))


def test_an_encoder_the_runtime_cannot_drive_is_explained(omni_bundle, journal):
    raw = stream_from_journal(journal)
    width = llm_width(omni_bundle / "llm" / "llm-F16.gguf")
    # the vision graph where the audio graph belongs: no streaming cache input
    stream = embed_media(raw, width, omni_bundle / "onnx" / "vision.fp32.onnx", None)
    assert stream.chunks is raw.chunks and "media not embedded (the audio graph's past_kv input" in stream.source
