"""Exportable token2wav pieces built from the reference modules' own layers.

The reference streams with Python-side state (caches in dicts, buffers
written in place, random draws inside the vocoder). These wrappers keep the
same layers and arithmetic but make every piece of state an explicit tensor
input/output, so each can be traced to ONNX and driven step by step:

- `FlowEncoderChunk`: speech codes of one window -> the mel-rate condition `mu`
  (encoder + projection), plus the projected speaker vector, with the
  conformer caches in and out.
- `EstimatorStep`: one Euler step of the flow-matching sampler (both
  classifier-free-guidance branches in one batch), with the DiT caches.
- `HiftVocoder`: mel -> 24 kHz waveform; the random phase and noise of the
  source are inputs, and STFT/ISTFT are fixed convolutions.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize


class FlowEncoderChunk(nn.Module):
    """tokens (1, T) [+ lookahead pad] -> mu (1, 80, 2*(T-3+pad)), spk (1, 80), caches."""

    def __init__(self, flow: nn.Module) -> None:
        super().__init__()
        self.embedding, self.encoder, self.proj = flow.input_embedding, flow.encoder, flow.encoder_proj
        self.spk_affine = flow.spk_embed_affine_layer

    def forward(self, token: torch.Tensor, lookahead_pad: torch.Tensor, spk_embedding: torch.Tensor,
                cnn_cache: torch.Tensor, att_cache: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        enc = self.encoder
        n_first = len(enc.encoders)
        offset = att_cache.shape[3] // 2
        att_first, att_up = att_cache[:n_first, :, :, :offset], att_cache[n_first:]
        xs, _, _ = enc.embed(self.embedding(token), None)
        xs = torch.cat([xs, lookahead_pad], dim=1)  # zeros after the last window, as the reference pads
        xs, new_cnn_first = enc.pre_lookahead_layer.forward_chunk(xs, cache=cnn_cache[:, :, :2])
        pos = enc.embed.position_encoding(offset=None, size=offset + xs.shape[1])
        no_mask = torch.zeros((0, 0, 0))
        first = []
        for i, layer in enumerate(enc.encoders):
            xs, _, new, _ = layer(xs, no_mask, pos, att_cache=att_first[i])
            first.append(new)
        xs, _, new_cnn_up = enc.up_layer.forward_chunk(xs.transpose(1, 2), None, cache=cnn_cache[:, :, 2:])
        xs, _, _ = enc.up_embed(xs.transpose(1, 2), None)
        pos = enc.embed.position_encoding(offset=None, size=offset * enc.up_layer.stride + xs.shape[1])
        up = []
        for i, layer in enumerate(enc.up_encoders):
            xs, _, new, _ = layer(xs, no_mask, pos, att_cache=att_up[i])
            up.append(new)
        xs = enc.after_norm(xs)
        new_att = torch.cat([torch.stack(first).repeat(1, 1, 1, 2, 1), torch.stack(up)], dim=0)
        new_cnn = torch.cat([new_cnn_first, new_cnn_up], dim=2)
        spk = self.spk_affine(F.normalize(spk_embedding, dim=1))
        return self.proj(xs).transpose(1, 2), spk, new_cnn, new_att


class EstimatorStep(nn.Module):
    """x_{t+dt} = x + dt * ((1+r) v(x | mu, spk, cond) - r v(x | 0)), with the DiT caches of this step."""

    def __init__(self, flow: nn.Module) -> None:
        super().__init__()
        self.dit = flow.decoder.estimator
        self.cfg_rate = float(flow.decoder.inference_cfg_rate)

    def forward(self, x: torch.Tensor, mu: torch.Tensor, spk: torch.Tensor, cond: torch.Tensor,
                t: torch.Tensor, dt: torch.Tensor, cnn_cache: torch.Tensor, att_cache: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        dit, frames = self.dit, x.shape[2]
        x_in = x.repeat(2, 1, 1)
        mu_in = torch.cat([mu, torch.zeros_like(mu)], dim=0)
        spk_in = torch.cat([spk, torch.zeros_like(spk)], dim=0)[:, :, None].expand(-1, -1, frames)
        cond_in = torch.cat([cond, torch.zeros_like(cond)], dim=0)
        temb = dit.t_embedder(t.repeat(2)).unsqueeze(1)
        h = dit.in_proj(torch.cat([x_in, mu_in, spk_in, cond_in], dim=1).transpose(1, 2))
        cnn_out, att_out = [], []
        for i, block in enumerate(dit.blocks):
            h, new_cnn, new_att = block.forward_chunk(h, temb, cnn_cache[i], att_cache[i], None)
            cnn_out.append(new_cnn)
            att_out.append(new_att)
        v = dit.final_layer(h, temb).transpose(1, 2)
        v_cond, v_free = v[:1], v[1:]
        guided = (1.0 + self.cfg_rate) * v_cond - self.cfg_rate * v_free
        return x + dt * guided, torch.stack(cnn_out), torch.stack(att_out)


# Resampling by an integer factor, written out so onnxruntime computes exactly what torch's
# F.interpolate / nn.Upsample compute on CPU. onnxruntime's Resize derives coordinates from a
# float scale and drifts by ~1e-6 samples, which the steep phase ramp turns into ~1e-4 errors.
# torch contracts two steps into fused multiply-adds; float64 arithmetic reproduces that rounding.


def _upsample_nearest(x: torch.Tensor, factor: int) -> torch.Tensor:
    index = torch.arange(x.shape[2] * factor) // factor
    return x[:, :, index]


def _downsample_linear(x: torch.Tensor, factor: int) -> torch.Tensor:
    """Half-pixel linear interpolation at 1/factor (even factor): the mean of the two middle samples."""
    frames = x.shape[2] // factor
    y = x[:, :, : frames * factor].reshape(x.shape[0], x.shape[1], -1, factor)
    return y[..., factor // 2 - 1] * 0.5 + y[..., factor // 2] * 0.5


def _upsample_linear(x: torch.Tensor, factor: int) -> torch.Tensor:
    """Half-pixel linear interpolation at x factor, with torch's index and weight arithmetic."""
    n = x.shape[2]
    k = torch.arange(n * factor).to(torch.float64) + 0.5
    scale = float(torch.tensor(1.0 / factor, dtype=torch.float32))
    real = torch.clamp((k * scale - 0.5).float(), min=0.0)
    low = torch.floor(real)
    w1 = real - low
    i0 = low.long()
    i1 = torch.clamp(i0 + 1, max=n - 1)
    a, b = x[:, :, i0], x[:, :, i1]
    return ((b * w1).double() + a.double() * (1 - w1).double()).float()


def fold_weight_norm(module: nn.Module) -> nn.Module:
    """A copy with every weight-norm parametrisation folded into a plain weight."""
    # torch's remove_parametrizations deletes the property from the parametrised class, which a
    # deep copy shares with the original; so the copy is un-parametrised by hand instead.
    folded = copy.deepcopy(module)
    for sub in list(folded.modules()):
        if parametrize.is_parametrized(sub, "weight"):
            with torch.no_grad():
                weight = sub.weight.detach().clone()
            sub.__class__ = sub.__class__.__bases__[0]
            del sub._modules["parametrizations"]
            sub.register_parameter("weight", nn.Parameter(weight))
    return folded


def _stft_kernels(n_fft: int, window: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Analysis (real | imag rows) and one-sided inverse-DFT synthesis kernels, both windowed."""
    bins = n_fft // 2 + 1
    n = torch.arange(n_fft, dtype=torch.float64)
    k = torch.arange(bins, dtype=torch.float64)[:, None]
    angle = 2 * math.pi * k * n / n_fft
    win = window.to(torch.float64)
    analysis = torch.cat([torch.cos(angle) * win, -torch.sin(angle) * win])[:, None, :]
    weight = torch.full((bins, 1), 2.0, dtype=torch.float64)
    weight[0] = weight[-1] = 1.0  # DC and Nyquist appear once in a one-sided spectrum
    synthesis = torch.cat([weight * torch.cos(angle), -weight * torch.sin(angle)]) / n_fft * win
    return analysis.float(), synthesis[:, None, :].float()


class HiftVocoder(nn.Module):
    """mel (1, 80, T) -> speech (1, 480*T) and source (1, 1, 480*T), noise given as inputs."""

    STACK = ("conv_pre", "ups", "source_downs", "source_resblocks", "resblocks", "conv_post")

    def __init__(self, hift: nn.Module, half_stack: bool = False) -> None:
        super().__init__()
        self.hift = fold_weight_norm(hift)
        # FP16 variant: only the convolution stack runs in half precision. The F0, phase and
        # STFT/ISTFT path stays FP32 (a 0.1 Hz F0 error is a large phase error a second later).
        self.stack_dtype = torch.float16 if half_stack else torch.float32
        for name in self.STACK:
            getattr(self.hift, name).to(self.stack_dtype)
        self.n_fft, self.hop = int(hift.istft_params["n_fft"]), int(hift.istft_params["hop_len"])
        analysis, synthesis = _stft_kernels(self.n_fft, hift.stft_window)
        self.register_buffer("analysis", analysis, persistent=False)
        self.register_buffer("synthesis", synthesis, persistent=False)
        self.register_buffer("window_sq", (hift.stft_window.float() ** 2)[None, None, :], persistent=False)

    def source(self, f0: torch.Tensor, rand_ini: torch.Tensor, sine_noise: torch.Tensor) -> torch.Tensor:
        """The harmonic source of SourceModuleHnNSF2 with its random draws supplied."""
        m = self.hift.m_source
        gen = m.l_sin_gen
        factor = int(gen.upsample_scale)
        f0_up = _upsample_nearest(f0[:, None], factor).transpose(1, 2)  # (1, L, 1)
        harmonics = torch.arange(1, gen.harmonic_num + 2, dtype=f0.dtype)
        rad = (f0_up * harmonics / gen.sampling_rate) % 1
        ini = torch.cat([torch.zeros_like(rand_ini[:, :1]), rand_ini[:, 1:]], dim=1)
        rad = torch.cat([rad[:, :1] + ini[:, None, :], rad[:, 1:]], dim=1)
        rad = _downsample_linear(rad.transpose(1, 2), factor).transpose(1, 2)
        # torch accumulates a float32 cumsum in float64; doing so explicitly keeps exported graphs equal.
        phase = torch.cumsum(rad.double(), dim=1).float() * 2 * math.pi
        phase = _upsample_linear(phase.transpose(1, 2) * factor, factor).transpose(1, 2)
        sines = torch.sin(phase) * gen.sine_amp
        uv = (f0_up > gen.voiced_threshold).to(f0.dtype)
        noise_amp = uv * gen.noise_std + (1 - uv) * gen.sine_amp / 3
        sines = sines * uv + noise_amp * sine_noise
        return m.l_tanh(m.l_linear(sines)).transpose(1, 2)  # (1, 1, L)

    def forward(self, mel: torch.Tensor, cache_source: torch.Tensor, rand_ini: torch.Tensor,
                sine_noise: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hift = self.hift
        s = self.source(hift.f0_predictor(mel), rand_ini, sine_noise)
        s = torch.cat([cache_source, s[:, :, cache_source.shape[2]:]], dim=2)  # reuse the cached source
        pad = self.n_fft // 2
        spec = F.conv1d(F.pad(s, (pad, pad), mode="reflect"), self.analysis, stride=self.hop)
        dtype = self.stack_dtype
        spec = spec.to(dtype)
        x = hift.conv_pre(mel.to(dtype))
        for i in range(hift.num_upsamples):
            x = hift.ups[i](F.leaky_relu(x, hift.lrelu_slope))
            if i == hift.num_upsamples - 1:
                x = hift.reflection_pad(x)
            x = x + hift.source_resblocks[i](hift.source_downs[i](spec))
            xs = hift.resblocks[i * hift.num_kernels](x)
            for j in range(1, hift.num_kernels):
                xs = xs + hift.resblocks[i * hift.num_kernels + j](x)
            x = xs / hift.num_kernels
        x = hift.conv_post(F.leaky_relu(x)).float()
        bins = self.n_fft // 2 + 1
        magnitude = torch.clamp(torch.exp(x[:, :bins]), max=1e2)
        phase = torch.sin(x[:, bins:])
        spec_out = torch.cat([magnitude * torch.cos(phase), magnitude * torch.sin(phase)], dim=1)
        frames = F.conv_transpose1d(spec_out, self.synthesis, stride=self.hop)
        envelope = F.conv_transpose1d(torch.ones_like(spec_out[:, :1]), self.window_sq, stride=self.hop)
        speech = (frames / envelope)[:, 0, pad:frames.shape[2] - pad]
        return torch.clamp(speech, -hift.audio_limit, hift.audio_limit), s


def hift_noise(seed: int, mel_frames: int, harmonics: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The draws HiFTGenerator.forward makes after `torch.manual_seed(seed)`, in its order."""
    gen = torch.Generator().manual_seed(seed)
    samples = mel_frames * 480
    rand_ini = torch.rand(1, harmonics + 1, generator=gen)
    # randn_like keeps the sine tensor's (batch, harmonic, time) memory layout, and torch fills a
    # non-contiguous tensor in a different order than a contiguous one: draw into that layout.
    dims = harmonics + 1
    sine_noise = torch.empty_strided((1, samples, dims), (samples * dims, 1, samples)).normal_(generator=gen)
    sine_noise = sine_noise.contiguous()
    return rand_ini, sine_noise
