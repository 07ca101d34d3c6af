"""First stages for the media encoders: the session's phrases from clips and sequences; colours and shapes from frames.

Jointly with the LLM the encoder learns which question was asked only from
the few answer tokens of a session, slowly. Here it learns it first from
phrases alone (three chunks each, through the same per-chunk features and
block-causal encoding), which separates the questions, the backchannels and
the barge-in openers in about a minute. Optionally part of the stage hears
sequences as long as a session (one voice saying phrases one after another)
and clips at random encoder positions; measured through the runtime that
made later questions heard worse, so both are off by default. A head names
each phrase from the chunk where the model would answer it and from all of
its chunks up to there, so the encoder carries what was said into that
chunk. The classifier head is kept for the joint stage's
"which question was asked" term and is not part of the checkpoint. For Omni,
the resampler learns in the same way to carry the colour and the shape on
camera before the LLM has to read them. Heads are training-only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from export.train.batch import FrameCache, Slicing, stream_mels
from export.train.frames import Scene, random_scene, render
from export.train.model import Venus
from export.train.script import COLOURS, SHAPES
from export.train.session import CHUNK_S, FRAME_SEEDS, colour, pause_inside, response_chunk
from export.train.voices import RATE, ClipBank, Voice
from kernels.resample import resample

CLIP_CHUNKS = 3
SEQ_CHUNKS = 20  # a second-phase sequence is as long as a training session: every position is heard
SEQ_BATCH = 6


def vary(audio: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A little faster or slower, louder or quieter, through a random tilt or room, sometimes with a pause."""
    audio = audio * float(rng.uniform(0.5, 1.5))
    audio = colour(resample(audio, int(round(RATE * (1 + rng.uniform(-0.1, 0.1)))), RATE), rng)
    return pause_inside(audio, rng) if rng.random() < 0.3 else audio


def noisy(buf: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.8:
        buf = buf + (rng.standard_normal(len(buf)) * 10 ** (rng.uniform(-55, -35) / 20)).astype(np.float32)
    return np.clip(buf, -1.0, 1.0)


@dataclass
class Heard:
    """One phrase placed in a sequence: its class, its first chunk and the chunk where the model would answer."""

    seq: int
    first: int
    answer: int
    label: int


def clip_batch(rng: np.random.Generator, bank: ClipBank, voices: tuple[Voice, ...], texts: list[str],
               n: int, anywhere: bool = False) -> tuple[torch.Tensor, list[Heard], torch.Tensor]:
    """n phrases alone in three chunks, at the encoder's first positions or (`anywhere`) at a random one."""
    mels, heard, offsets = [], [], []
    per = 50  # encoder positions per chunk
    for i in range(n):
        label = int(rng.integers(len(texts)))
        audio = vary(bank.get(texts[label], voices[int(rng.integers(len(voices)))]), rng)
        buf = np.zeros(CLIP_CHUNKS * RATE, np.float32)
        start = int(rng.uniform(0.0, 0.5) * RATE)
        audio = audio[:len(buf) - start]
        buf[start:start + len(audio)] = audio
        buf = noisy(buf, rng)
        mels.append(stream_mels([buf[k * RATE:(k + 1) * RATE] for k in range(CLIP_CHUNKS)]))
        heard.append(Heard(i, 0, CLIP_CHUNKS - 1, label))
        offsets.append(per * int(rng.integers(0, SEQ_CHUNKS - CLIP_CHUNKS + 1)) if anywhere else 0)
    return torch.from_numpy(np.stack(mels)), heard, torch.tensor(offsets)


def phrase_batch(rng: np.random.Generator, bank: ClipBank, voices: tuple[Voice, ...], texts: list[str],
                 n: int, chunks: int = SEQ_CHUNKS) -> tuple[torch.Tensor, list[Heard]]:
    """n sequences of `chunks` seconds, each one voice saying phrases one after another, as in a session.

    Phrases are drawn evenly from `texts`, varied as `vary` does, with silence between them and noise under
    all, so a phrase is heard at every position and after others, as later questions are in a session. The next
    phrase starts after the chunk where the model would answer the one before, so that chunk holds only what
    was said up to it."""
    mels, heard = [], []
    for i in range(n):
        voice = voices[int(rng.integers(len(voices)))]
        buf = np.zeros(chunks * RATE, np.float32)
        t = float(rng.uniform(0.0, 1.5))
        while True:
            label = int(rng.integers(len(texts)))
            audio = vary(bank.get(texts[label], voice), rng)
            end = t + len(audio) / RATE
            answer = response_chunk(end)
            if answer >= chunks:
                break
            at = int(round(t * RATE))
            buf[at:at + len(audio)] += audio[:len(buf) - at]
            heard.append(Heard(i, int(t // CHUNK_S), answer, label))
            t = answer + 1 + float(rng.uniform(0.0, 2.0))
        buf = noisy(buf, rng)
        mels.append(stream_mels([buf[k * RATE:(k + 1) * RATE] for k in range(chunks)]))
    return torch.from_numpy(np.stack(mels)), heard


def heard_logits(head: torch.nn.Module, emb: torch.Tensor, heard: list[Heard]) -> tuple[torch.Tensor, torch.Tensor]:
    """Class logits from the answer chunk alone (where the LLM decides) and from the phrase's chunks up to it."""
    now = head(torch.stack([emb[h.seq, h.answer].mean(0) for h in heard]))
    whole = head(torch.stack([emb[h.seq, h.first:h.answer + 1].mean((0, 1)) for h in heard]))
    return now, whole


def pretrain_audio(model: Venus, head: torch.nn.Linear, bank: ClipBank, voices: tuple[Voice, ...],
                   texts: list[str], steps: int, seed: int, lr: float, progress: bool, batch: int = 32,
                   seq_batch: int = SEQ_BATCH, sequences: float = 0.0, anywhere: bool = False) -> dict:
    """Phrases alone (it learns to tell them apart in a minute), then, for a `sequences` share of the steps,
    whole sequences of them (every position after other speech, where a session's later questions are heard).

    The default is clips alone at the first positions: with 40% of the steps on sequences and clips at random
    positions the bench through the runtime heard later questions worse, not better (README)."""
    if steps <= 0:
        return {}
    rng = np.random.default_rng([seed, 7])
    params = list(model.audio.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    first = max(1, round(steps * (1.0 - sequences))) if steps > 1 else steps
    bar = tqdm(range(steps), desc="audio encoder, stage 1", unit="step", disable=not progress, leave=False)
    stats: dict = {}
    for step in bar:
        i, n = (step, first) if step < first else (step - first, steps - first)
        for g in opt.param_groups:  # each phase: warm up, then a cosine down to a tenth, so its last steps settle
            g["lr"] = lr * min(1.0, (i + 1) / 20) * (0.1 + 0.45 * (1 + math.cos(math.pi * i / n)))
        if step < first:
            mel, heard, offset = clip_batch(rng, bank, voices, texts, batch, anywhere)
            emb = model.encode_audio(mel, offset)
        else:
            mel, heard = phrase_batch(rng, bank, voices, texts, seq_batch)
            emb = model.encode_audio(mel)
        now, whole = heard_logits(head, emb, heard)
        labels = torch.tensor([h.label for h in heard])
        loss = F.cross_entropy(now, labels) + F.cross_entropy(whole, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stats = {"loss": float(loss.detach()), "acc": float((whole.argmax(-1) == labels).float().mean()),
                 "last": float((now.argmax(-1) == labels).float().mean())}
        bar.set_postfix({k: f"{v:.2f}" for k, v in stats.items()})
    return stats


def frame_batch(rng: np.random.Generator, slicing: Slicing, n: int, sizes: tuple[tuple[int, int], ...],
                pool: tuple[Scene, ...] = (), cache: FrameCache | None = None
                ) -> tuple[list[list[torch.Tensor]], list[list[tuple]], torch.Tensor, torch.Tensor]:
    """n scenes rendered at training frame sizes and sliced as the runtime slices them, with each slice's key in
    `cache`: random ones, or (`pool`) the pool's, with one of FRAME_SEEDS noise patterns (as pooled sessions)."""
    views, keys, colours, shapes = [], [], [], []
    names = list(COLOURS)
    for _ in range(n):
        scene = pool[int(rng.integers(len(pool)))] if pool else random_scene(rng)
        size = sizes[int(rng.integers(len(sizes)))]
        seed = int(rng.integers(FRAME_SEEDS if pool else 1 << 30))
        vs = cache.views(scene, size, seed, slicing) if cache is not None else slicing.views(render(scene, size, seed))
        views.append([torch.from_numpy(v) for v in vs])
        keys.append([(scene, size, seed, i) for i in range(len(vs))])
        colours.append(names.index(scene.colour))
        shapes.append(SHAPES.index(scene.shape))
    return views, keys, torch.tensor(colours), torch.tensor(shapes)


def pretrain_vision(model: Venus, slicing: Slicing, sizes: tuple[tuple[int, int], ...], steps: int, seed: int,
                    lr: float, progress: bool, batch: int = 8, pool: tuple[Scene, ...] = (),
                    cache: FrameCache | None = None) -> dict:
    """The resampler learns to carry the colour and the shape on camera, read from its 64 outputs' mean.

    `pool`: scenes only from it (as the joint stage's with TrainSettings.frame_pool), their tower outputs kept in
    `cache` and reused by the joint stage."""
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
        views, keys, colours, shapes = frame_batch(rng, slicing, batch, sizes, pool, cache)
        if cache is not None and not model.tower_learns():
            emb = [[model.encode_view(v, cache.tower(k, lambda v=v: model.vision.tower(v))) for v, k in zip(vs, ks)]
                   for vs, ks in zip(views, keys)]
        else:
            emb = [[model.encode_view(v) for v in vs] for vs in views]
        pooled = torch.stack([torch.cat(e).mean(0) for e in emb])
        c, s = colour_head(pooled), shape_head(pooled)
        loss = F.cross_entropy(c, colours) + F.cross_entropy(s, shapes)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stats = {"loss": float(loss.detach()), "colour": float((c.argmax(-1) == colours).float().mean()),
                 "shape": float((s.argmax(-1) == shapes).float().mean())}
        bar.set_postfix({k: f"{v:.2f}" for k, v in stats.items()})
    return stats
