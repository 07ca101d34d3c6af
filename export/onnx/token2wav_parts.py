"""Token2wav in a bundle: where its assets are, its streaming contract, and a stream over graphs."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
from torch import nn

from edge.speech.venus.token2wav_stream import (STREAM_DEFAULTS, FlowShapes, GraphStream, NoiseSource, Runner,
                                          numpy_noise)
from export.torch_ref.token2wav_assets import load_flow, load_hift
from export.torch_ref.token2wav_ref import t_span

NOISE_FILE = "token2wav_noise.npy"
NOISE_SEED = 0
# 5 flow-matching steps, the faster setting; MiniCPM-o's own default is 10 (docs/checkpoint.md). A setting either way.
DEFAULT_TIMESTEPS = 5
GRAPHS = ("token2wav_encoder", "token2wav_step", "token2wav_vocoder")


def asset_dir(config: dict[str, Any], explicit: pathlib.Path | None) -> pathlib.Path | None:
    """The token2wav asset folder: the one given, else <checkpoint>/assets/token2wav when present."""
    if explicit is not None:
        return pathlib.Path(explicit)
    root = config.get("_name_or_path") or config.get("_checkpoint_dir")
    if root:
        candidate = pathlib.Path(root) / "assets" / "token2wav"
        if (candidate / "flow.yaml").is_file():
            return candidate
    return None


def timesteps(config: dict[str, Any], explicit: int | None) -> int:
    return int(explicit if explicit is not None else config.get("token2wav_n_timesteps", DEFAULT_TIMESTEPS))


def load(asset: pathlib.Path, n_timesteps: int) -> tuple[nn.Module, nn.Module]:
    return load_flow(asset, n_timesteps=n_timesteps, max_cache=1000, noise_seed=NOISE_SEED), load_hift(asset)


def flow_shapes(flow: nn.Module) -> FlowShapes:
    enc, dit = flow.encoder, flow.decoder.estimator
    att, block = enc.encoders[0].self_attn, dit.blocks[0].attn
    return FlowShapes(len(enc.encoders) + len(enc.up_encoders), att.h, enc.output_size(), 2 * att.d_k,
                      len(dit.blocks), block.num_heads, 2 * block.head_dim, 2 * dit.in_proj.out_features)


def contract(flow: nn.Module, hift: nn.Module, n_timesteps: int) -> dict[str, Any]:
    """Everything a runtime needs to drive the three graphs as one stream (stored in the manifest)."""
    shapes = flow_shapes(flow)
    return {
        **STREAM_DEFAULTS,
        "n_timesteps": n_timesteps,
        "t_span": [float(v) for v in t_span(n_timesteps)],
        "cfg_rate": float(flow.decoder.inference_cfg_rate),
        "noise_file": NOISE_FILE,
        "harmonics": int(hift.m_source.l_sin_gen.harmonic_num) + 1,
        "shapes": shapes.__dict__,
        "steps": [
            "setup: encoder(prompt codes + 3 x silence_code, empty caches) then n_timesteps sampler steps "
            "with cond = prompt mel (frames x 80, transposed); keep only the caches",
            "window: 28 codes (25 new + 3 lookahead), stride 25; the last window holds the remaining codes and "
            "passes lookahead_pad = zeros(1, 3, width), others zeros(1, 0, width)",
            "sampler: x = noise[:, :, c : c + frames] with c = the step caches' length; for each step i, "
            "x = step(x, mu, spk, cond = 0, t, dt, caches[i]); t += dt; dt = t_span[i + 1] - t",
            "after each window: every attention cache keeps its first prompt_frames and last 100 frames",
            "vocoder: mel = last 8 mel frames of the previous window + this window's; cache_source = last 3840 "
            "source samples; cross-fade the first 3840 samples with the previous tail (Hamming, 7680); "
            "hold back the last 3840 samples unless this is the last window",
        ],
    }


def graph_stream(runners: dict[str, Runner], terms: dict[str, Any], noise: np.ndarray,
                 vocoder_noise: NoiseSource | None = None, seed: int = 0) -> GraphStream:
    """A stream over the three graphs; the vocoder noise comes from NumPy unless given."""
    params = {k: terms[k] for k in STREAM_DEFAULTS}
    if vocoder_noise is None:
        vocoder_noise = numpy_noise(seed, int(terms.get("harmonics", 9)))
    return GraphStream(runners["token2wav_encoder"], runners["token2wav_step"], runners["token2wav_vocoder"],
                       FlowShapes(**terms["shapes"]), noise, np.asarray(terms["t_span"], np.float32),
                       vocoder_noise, params)
