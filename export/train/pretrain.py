"""First stages for the media encoders: the session's phrases from isolated clips; colours and shapes from frames.

Jointly with the LLM the encoder learns which question was asked only from
the few answer tokens of a session, slowly; from isolated clips (three
chunks each, through the same per-chunk features and block-causal
encoding) it learns it in about a minute, and the joint stage then starts
from features that already separate the questions, the backchannels and
the barge-in openers, and carry what was said into the chunk after it (the
one where the model answers). The classifier head is kept for the joint stage's
"which question was asked" term and is not part of the checkpoint. For Omni,
the resampler learns in the same way to carry the colour and the shape on
camera before the LLM has to read them. Heads are training-only.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from export.train.batch import Slicing, stream_mels
from export.train.frames import random_scene, render
from export.train.model import Venus
from export.train.script import COLOURS, SHAPES
from export.train.session import colour
from export.train.voices import RATE, ClipBank, Voice
from kernels.resample import resample

CLIP_CHUNKS = 3


def clip_batch(rng: np.random.Generator, bank: ClipBank, voices: tuple[Voice, ...], texts: list[str],
               n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n clips at a random place in three chunks of noise, a little faster or slower, louder or quieter."""
    mels, labels = [], []
    for _ in range(n):
        label = int(rng.integers(len(texts)))
        voice = voices[int(rng.integers(len(voices)))]
        audio = bank.get(texts[label], voice) * float(rng.uniform(0.5, 1.5))
        audio = colour(resample(audio, int(round(RATE * (1 + rng.uniform(-0.1, 0.1)))), RATE), rng)
        buf = np.zeros(CLIP_CHUNKS * RATE, np.float32)
        start = int(rng.uniform(0.0, 0.5) * RATE)
        audio = audio[:len(buf) - start]
        buf[start:start + len(audio)] = audio
        buf += (rng.standard_normal(len(buf)) * 10 ** (rng.uniform(-55, -35) / 20)).astype(np.float32)
        mels.append(stream_mels([buf[k * RATE:(k + 1) * RATE] for k in range(CLIP_CHUNKS)]))
        labels.append(label)
    return torch.from_numpy(np.stack(mels)), torch.tensor(labels)


def pretrain_audio(model: Venus, head: torch.nn.Linear, bank: ClipBank, voices: tuple[Voice, ...],
                   texts: list[str], steps: int, seed: int, lr: float, progress: bool, batch: int = 32) -> dict:
    if steps <= 0:
        return {}
    rng = np.random.default_rng([seed, 7])
    params = list(model.audio.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    bar = tqdm(range(steps), desc="audio encoder, stage 1", unit="step", disable=not progress, leave=False)
    stats: dict = {}
    for step in bar:
        for g in opt.param_groups:
            g["lr"] = lr * min(1.0, (step + 1) / 20)
        mel, labels = clip_batch(rng, bank, voices, texts, batch)
        emb = model.encode_audio(mel)
        logits = head(emb.mean((1, 2)))  # from everything heard
        later = head(emb[:, -1].mean(1))  # from the last chunk, where the clip has ended or is ending
        loss = F.cross_entropy(logits, labels) + F.cross_entropy(later, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stats = {"loss": float(loss.detach()), "acc": float((logits.argmax(-1) == labels).float().mean()),
                 "last": float((later.argmax(-1) == labels).float().mean())}
        bar.set_postfix({k: f"{v:.2f}" for k, v in stats.items()})
    return stats


def frame_batch(rng: np.random.Generator, slicing: Slicing, n: int, sizes: tuple[tuple[int, int], ...]
                ) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """n random scenes rendered at training frame sizes and sliced as the runtime slices them."""
    views, colours, shapes = [], [], []
    names = list(COLOURS)
    for _ in range(n):
        scene = random_scene(rng)
        frame = render(scene, sizes[int(rng.integers(len(sizes)))], int(rng.integers(1 << 30)))
        vs = slicing.views(frame)
        views.append([torch.from_numpy(v) for v in vs])
        colours.append(names.index(scene.colour))
        shapes.append(SHAPES.index(scene.shape))
    return views, torch.tensor(colours), torch.tensor(shapes)


def pretrain_vision(model: Venus, slicing: Slicing, sizes: tuple[tuple[int, int], ...], steps: int, seed: int,
                    lr: float, progress: bool, batch: int = 8) -> dict:
    """The resampler learns to carry the colour and the shape on camera, read from its 64 outputs' mean."""
    if steps <= 0 or model.vision is None:
        return {}
    rng = np.random.default_rng([seed, 11])
    width = model.vision.embed_dim
    colour_head, shape_head = torch.nn.Linear(width, len(COLOURS)), torch.nn.Linear(width, len(SHAPES))
    params = [p for p in model.vision.parameters() if p.requires_grad]
    params += list(colour_head.parameters()) + list(shape_head.parameters())
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    bar = tqdm(range(steps), desc="resampler, stage 1", unit="step", disable=not progress, leave=False)
    stats: dict = {}
    for step in bar:
        views, colours, shapes = frame_batch(rng, slicing, batch, sizes)
        pooled = torch.stack([torch.cat([model.encode_view(v) for v in vs]).mean(0) for vs in views])
        c, s = colour_head(pooled), shape_head(pooled)
        loss = F.cross_entropy(c, colours) + F.cross_entropy(s, shapes)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stats = {"loss": float(loss.detach()), "colour": float((c.argmax(-1) == colours).float().mean()),
                 "shape": float((s.argmax(-1) == shapes).float().mean())}
        bar.set_postfix({k: f"{v:.2f}" for k, v in stats.items()})
    return stats
