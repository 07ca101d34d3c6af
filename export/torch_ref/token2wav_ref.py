"""The reference token2wav stream on CPU, driving the packaged modules as the reference runtime does.

Streaming contract (MiniCPM-o 4.5 / Step-Audio2 token2wav):
- set-up: the prompt's speech codes plus 3 silence codes (4218) and its mel
  (2 frames per code) run once through the flow encoder and sampler with the
  mel as condition; only the caches are kept.
- each step: a window of 28 codes = 25 new codes + 3 lookahead codes; the next
  window starts 25 codes later. The encoder drops the lookahead (it returns
  50 mel frames), except on the last window, which is padded instead.
- after each step the sampler's attention cache keeps the prompt frames plus
  the last 100 frames (the conformer cache likewise); the sampler's fixed noise
  is read at the cache length.
- the vocoder re-runs the last 8 mel frames of the previous step, reuses its
  last 3840 source samples, cross-fades 3840 samples with a Hamming window and
  holds those samples back until the next step (or emits them on the last).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from export.torch_ref.token2wav_graphs import hift_noise

CHUNK_CODES = 25
LOOKAHEAD_CODES = 3
WINDOW_CODES = CHUNK_CODES + LOOKAHEAD_CODES
SILENCE_CODE = 4218
MEL_CACHE_FRAMES = 8
SOURCE_CACHE_SAMPLES = MEL_CACHE_FRAMES * 480
KEEP_RECENT_FRAMES = 100


def t_span(n_timesteps: int) -> torch.Tensor:
    """The sampler's cosine-scheduled times, float32, as the reference computes them."""
    span = torch.linspace(0, 1, n_timesteps + 1, dtype=torch.float32)
    return 1 - torch.cos(span * 0.5 * torch.pi)


def crossfade_window() -> np.ndarray:
    return np.hamming(2 * SOURCE_CACHE_SAMPLES)


@dataclass
class StreamInputs:
    """What a stream needs besides codes: the voice prompt."""

    prompt_tokens: np.ndarray  # (P,) int speech codes of the reference voice
    prompt_mel: np.ndarray  # (2P, 80) float mel of the reference voice
    spk_embedding: np.ndarray  # (192,) speaker vector


class ReferenceStream:
    """Streams codes to audio with the packaged flow (setup_cache / inference_chunk) and HiFT."""

    def __init__(self, flow: torch.nn.Module, hift: torch.nn.Module, n_timesteps: int, hift_seed: int = 0) -> None:
        self.flow, self.hift, self.n_timesteps, self.hift_seed = flow, hift, n_timesteps, hift_seed
        self.calls = 0

    @torch.inference_mode()
    def setup(self, inputs: StreamInputs) -> None:
        tokens = torch.from_numpy(np.asarray(inputs.prompt_tokens, dtype=np.int64))[None]
        pad = torch.full((1, LOOKAHEAD_CODES), SILENCE_CODE, dtype=torch.int64)
        self.prompt_mel = torch.from_numpy(np.asarray(inputs.prompt_mel, dtype=np.float32))[None]
        self.spk = torch.from_numpy(np.asarray(inputs.spk_embedding, dtype=np.float32))[None]
        self.cache = self.flow.setup_cache(torch.cat([tokens, pad], dim=1), self.prompt_mel, self.spk,
                                           n_timesteps=self.n_timesteps)
        self.cache = {k: v.clone() for k, v in self.cache.items()}  # the reference returns views of buffers
        self.hift_mel = torch.zeros(1, 80, 0)
        self.hift_source = torch.zeros(1, 1, 0)
        self.hift_speech = torch.zeros(1, 0)
        self.calls = 0

    @torch.inference_mode()
    def push(self, codes: np.ndarray, last: bool = False) -> np.ndarray:
        """One window of codes -> the waveform it releases (float32, 24 kHz)."""
        token = torch.from_numpy(np.asarray(codes, dtype=np.int64))[None]
        mel, cache = self.flow.inference_chunk(token=token, spk=self.spk, cache=self.cache, last_chunk=last,
                                               n_timesteps=self.n_timesteps)
        cache = {k: v.clone() for k, v in cache.items()}
        keep = self.prompt_mel.shape[1]
        if cache["estimator_att_cache"].shape[4] > keep + KEEP_RECENT_FRAMES:
            att = cache["estimator_att_cache"]
            cache["estimator_att_cache"] = torch.cat([att[..., :keep, :], att[..., -KEEP_RECENT_FRAMES:, :]], dim=4)
        if cache["conformer_att_cache"].shape[3] > keep + KEEP_RECENT_FRAMES:
            att = cache["conformer_att_cache"]
            cache["conformer_att_cache"] = torch.cat([att[:, :, :, :keep], att[:, :, :, -KEEP_RECENT_FRAMES:]], dim=3)
        self.cache = cache
        self.last_mel = mel[0].numpy().copy()  # (80, frames): the flow's output, kept for parity checks
        mel = torch.cat([self.hift_mel, mel], dim=2)
        torch.manual_seed(self.hift_seed + self.calls)  # the vocoder draws its source noise from torch's RNG
        self.calls += 1
        speech, source = self.hift(mel, self.hift_source)
        if self.hift_speech.shape[-1] > 0:
            window = torch.from_numpy(crossfade_window()).float()
            head = speech[:, :SOURCE_CACHE_SAMPLES] * window[:SOURCE_CACHE_SAMPLES]
            tail = self.hift_speech * window[SOURCE_CACHE_SAMPLES:]
            speech = torch.cat([head + tail, speech[:, SOURCE_CACHE_SAMPLES:]], dim=1)
        self.hift_mel = mel[..., -MEL_CACHE_FRAMES:].clone()
        self.hift_source = source[:, :, -SOURCE_CACHE_SAMPLES:].clone()
        self.hift_speech = speech[:, -SOURCE_CACHE_SAMPLES:].clone()
        if not last:
            speech = speech[:, :-SOURCE_CACHE_SAMPLES]
        return speech[0].numpy().astype(np.float32)

    def noise_for(self, call: int, mel_frames: int) -> tuple[np.ndarray, np.ndarray]:
        """The vocoder noise this stream draws on call `call` (for driving an exported graph alike)."""
        harmonics = self.hift.m_source.l_sin_gen.harmonic_num
        rand_ini, sine_noise = hift_noise(self.hift_seed + call, mel_frames, harmonics)
        return rand_ini.numpy(), sine_noise.numpy()


def split_windows(codes: np.ndarray) -> list[tuple[np.ndarray, bool]]:
    """Cut a code sequence into the stream's windows: 28 codes every 25, the tail as the last window."""
    windows, start = [], 0
    while len(codes) - start > WINDOW_CODES:
        windows.append((codes[start:start + WINDOW_CODES], False))
        start += CHUNK_CODES
    windows.append((codes[start:], True))
    return windows
