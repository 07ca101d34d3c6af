"""Streaming behaviour: the audio encoder chunk by chunk, and token2wav's graphs vs the packaged modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from export.onnx.graphs import audio_spec, export_graph
from export.onnx.probes import audio_feeds, stream_inputs
from export.onnx.session import open_session
from export.onnx.token2wav_parts import flow_shapes, graph_stream
from edge.speech.venus.token2wav_stream import STREAM_DEFAULTS, GraphStream
from export.torch_ref.tiny_parts import tiny_media_config, tiny_media_tensors, write_token2wav_assets
from export.torch_ref.token2wav_assets import load_flow, load_hift
from export.torch_ref.token2wav_graphs import EstimatorStep, FlowEncoderChunk, HiftVocoder, hift_noise
from export.torch_ref.token2wav_ref import ReferenceStream, split_windows, t_span


@pytest.fixture(scope="module")
def audio(tmp_path_factory):
    config = {**tiny_media_config("audio"), "hidden_size": 64}
    tensors = tiny_media_tensors("audio", config, seed=4)
    spec = audio_spec(tensors.__getitem__, config)
    path = tmp_path_factory.mktemp("audio") / "audio.fp32.onnx"
    export_graph(spec, path)
    return spec.module, open_session(path)


def test_chunks_with_the_cache_equal_block_causal_encoding(audio):
    module, session = audio
    feeds = audio_feeds(module, seed=7, chunks=3)
    got = np.concatenate([session.run(None, feed)[0] for feed in feeds], axis=1)
    with torch.no_grad():
        blockwise = module.encode_blockwise([torch.from_numpy(f["mel"]) for f in feeds]).numpy()
    assert got.shape == (1, 10 + 10 + 10, 64)  # 10 embeddings per second of audio
    assert np.abs(got - blockwise).max() < 1e-4


def test_the_encoder_is_not_causal_inside_a_chunk(audio):
    """Whole-input encoding (full attention, convolutions across chunk edges) differs from streaming."""
    module, session = audio
    feeds = audio_feeds(module, seed=8, chunks=2)
    chunked = np.concatenate([session.run(None, feed)[0] for feed in feeds], axis=1)
    whole_mel = np.concatenate([f["mel"] for f in feeds], axis=2)
    whole = session.run(None, {"mel": whole_mel, "past_kv": feeds[0]["past_kv"]})[0]
    assert whole.shape == chunked.shape
    assert np.abs(whole[:, :10] - chunked[:, :10]).max() > 1e-3  # the first second sees the second one
    # A chunk only ever depends on the past: changing the second chunk leaves the first unchanged.
    other = session.run(None, {"mel": whole_mel[..., :103], "past_kv": feeds[0]["past_kv"]})[0]
    assert np.abs(other - chunked[:, :10]).max() == 0.0


def test_cache_grows_by_the_chunk_and_positions_continue(audio):
    module, session = audio
    feeds = audio_feeds(module, seed=9, chunks=2)
    _, present = session.run(None, feeds[0])
    assert present.shape[4] == 52  # ceil(103 / 2) encoder frames
    _, present2 = session.run(None, {"mel": feeds[1]["mel"], "past_kv": present})
    assert present2.shape[4] == 52 + 50
    assert np.abs(present2[..., :52, :] - present).max() == 0.0


@pytest.fixture(scope="module")
def token2wav(tmp_path_factory):
    path = tmp_path_factory.mktemp("t2w")
    write_token2wav_assets(path, seed=5)
    return load_flow(path, n_timesteps=3, max_cache=400), load_hift(path)


def test_vocoder_graph_module_matches_the_packaged_hift(token2wav):
    _, hift = token2wav
    mel, cache = torch.randn(1, 80, 30), torch.randn(1, 1, 3840) * 0.05
    torch.manual_seed(17)
    speech, source = hift(mel, cache)
    rand_ini, sine_noise = hift_noise(17, 30, hift.m_source.l_sin_gen.harmonic_num)
    with torch.no_grad():
        got_speech, got_source = HiftVocoder(hift)(mel, cache, rand_ini, sine_noise)
    assert torch.equal(got_source, source)  # same draws, same resampling arithmetic: bit for bit
    assert (got_speech - speech).abs().max() < 1e-6  # STFT/ISTFT as convolutions instead of FFTs
    assert speech.abs().max() < 0.99  # not clipped: the tiny vocoder makes speech-like levels


def test_encoder_chunk_module_matches_the_packaged_encoder(token2wav):
    flow, _ = token2wav
    enc, width = flow.encoder, flow.encoder.output_size()
    att = enc.encoders[0].self_attn
    layers = len(enc.encoders) + len(enc.up_encoders)
    wrapper = FlowEncoderChunk(flow)
    cnn, cache = torch.zeros(1, width, 6), torch.zeros(layers, 1, att.h, 0, 2 * att.d_k)
    ref_cnn = ref_att = None
    with torch.inference_mode():
        for codes, last in ((torch.randint(0, 6561, (1, 31)), False), (torch.randint(0, 6561, (1, 12)), True)):
            h, ref_cnn, ref_att = enc.forward_chunk(flow.input_embedding(codes), last_chunk=last,
                                                    cnn_cache=ref_cnn, att_cache=ref_att)
            pad = torch.zeros(1, 3 if last else 0, width)
            mu, _, cnn, cache = wrapper(codes, pad, torch.randn(1, 192), cnn, cache)
            assert torch.equal(mu.transpose(1, 2), flow.encoder_proj(h))
            assert torch.equal(cache, ref_att) and torch.equal(cnn, ref_cnn)
    assert mu.shape[2] == 2 * 12  # the last window is padded, not trimmed


def test_windows_are_28_codes_every_25():
    windows = split_windows(np.arange(60))
    assert [(int(w[0]), len(w), last) for w, last in windows] == [(0, 28, False), (25, 28, False), (50, 10, True)]
    assert split_windows(np.arange(28))[0][1] is True  # one window that is also the last


def test_graph_modules_stream_like_the_packaged_reference(token2wav):
    """The three exported modules driven by the NumPy stream equal Token2wav's own streaming."""
    flow, hift = token2wav
    inputs, codes = stream_inputs(seed=3, codes=60)  # three windows; verify covers cache trimming
    reference = ReferenceStream(flow, hift, 3, hift_seed=2)
    reference.setup(inputs)

    def run(module):
        def call(feed):
            with torch.no_grad():
                return [o.numpy() for o in module(*[torch.from_numpy(np.ascontiguousarray(v)) for v in feed.values()])]
        return call

    terms = {"shapes": flow_shapes(flow).__dict__, "t_span": t_span(3).tolist()}
    stream: GraphStream = graph_stream(
        {"token2wav_encoder": run(FlowEncoderChunk(flow)), "token2wav_step": run(EstimatorStep(flow)),
         "token2wav_vocoder": run(HiftVocoder(hift))},
        {**terms, **STREAM_DEFAULTS},
        flow.decoder.rand_noise.numpy(), reference.noise_for)
    stream.setup(inputs.prompt_tokens, inputs.prompt_mel, inputs.spk_embedding)
    for window, last in split_windows(codes):
        expected = reference.push(window, last)
        got = stream.push(window, last)
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() < 1e-5
        assert np.abs(stream.last_mel - reference.last_mel).max() < 1e-5
