"""The training loop: fresh synthetic sessions every step, AdamW, a progress bar, reproducible from a seed.

Every random choice (sessions, clips, noise, weights) is drawn from the seed,
so one seed and one set of settings give the same checkpoint. The step count
is fixed (not a time budget) for the same reason.
"""
from __future__ import annotations

import dataclasses
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.tiny import TINY_LLM, VARIANTS, write_tiny
from export.train import script
from export.train.batch import Batch, FrameCache, Slicing, make_batch
from export.train.defaults import DEFAULTS
from export.train.frames import scene_pool
from export.train.model import Venus
from export.train.pretrain import pretrain_audio, pretrain_vision
from export.train.sequence import IGNORE, KINDS, Tokens
from export.train.session import FRAME_SIZES, Mix, make_session
from export.train.voices import TRAIN_VOICES, ClipBank, shifted_voices

VARIANT_DEFAULTS = ("asked_weight", "answer_weight", "frame_pool", "shifted")  # settings whose -1 means DEFAULTS[variant]
HELDOUT_STREAM = 999_983  # the seed stream of held-out evaluation sessions (training uses the step numbers)


@dataclass(frozen=True)
class TrainSettings:
    variant: str
    seed: int = 0
    steps: int = 0  # 0: the variant's default
    pretrain: int = -1  # steps of the audio encoder's first stage (export/train/pretrain.py); -1: the default
    pretrain_vision: int = -1  # Omni: steps of the resampler's first stage; -1: the default
    pretrain_sequences: float = 0.0  # the share of the audio first stage on session-long phrase sequences
    pretrain_anywhere: bool = False  # first-stage clips at random encoder positions instead of the first ones
    batch: int = 0
    chunks: int = 0  # session length in 1 s chunks (at most 30: the audio encoder's position table)
    lr: float = 2e-3
    media_lr: float = 2e-3
    warmup: int = 30
    llm: dict = field(default_factory=lambda: dict(TINY_LLM))
    # A wider streaming audio encoder than `venus-export tiny`'s 32: it learns which question was asked faster.
    audio: dict = field(default_factory=lambda: {"d_model": 64, "encoder_ffn_dim": 256, "encoder_attention_heads": 4})
    system_prompt: str | None = None  # None: the runtime's default (VenusSettings.system_prompt)
    train_tower: bool = False  # Omni: train the SigLIP tower too (the resampler always learns)
    voices: int = 0  # train on the first N training voices only (0: all of them); small runs in tests
    # Below, < 0 takes the variant's default (export/train/defaults.py).
    # A training-only head reads which question was just asked from the answer chunk's audio embeddings, so
    # the encoder learns to carry it to where the LLM decides (the head is not part of the checkpoint).
    asked_weight: float = -1.0
    # The loss weight of a turn's second token, which names the answer (the first, listen or speak, weighs 3).
    answer_weight: float = -1.0
    # Omni: training sessions show scenes from a pool of this many (0: every scene drawn afresh), so the frozen
    # tower encodes each distinct frame once (export/train/batch.FrameCache) and a step costs less.
    frame_pool: int = -1
    # Takes of every training espeak-ng voice with some vowels moved to a neighbour (voices.shifted_voices), heard
    # as further voices in both stages, so an accent never heard is still understood.
    shifted: int = -1

    def resolved(self) -> "TrainSettings":
        if self.variant not in VARIANTS:
            raise ExportError(f"Unknown variant {self.variant!r}: use one of {', '.join(VARIANTS)}.")
        d = DEFAULTS[self.variant]
        out = dataclasses.replace(self, steps=self.steps or d["steps"], batch=self.batch or d["batch"],
                                  pretrain=d["pretrain"] if self.pretrain < 0 else self.pretrain,
                                  pretrain_vision=d.get("pretrain_vision", 0) if self.pretrain_vision < 0
                                  else self.pretrain_vision,
                                  chunks=self.chunks or d["chunks"],
                                  system_prompt=runtime_system_prompt() if self.system_prompt is None
                                  else self.system_prompt,
                                  **{k: d[k] for k in VARIANT_DEFAULTS if getattr(self, k) < 0})
        if not 4 <= out.chunks <= 30:
            raise ExportError(f"Sessions of {out.chunks} chunks cannot be trained: use 4 to 30 (the streaming "
                              "audio encoder restarts its positions after 30 one-second chunks).")
        if out.steps < 1 or out.batch < 1:
            raise ExportError("Steps and batch size must be at least 1.")
        return out

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def runtime_system_prompt() -> str:
    from edge.bundle.settings import VenusSettings

    return VenusSettings().system_prompt


def phrases(variant: str) -> list[str]:
    return [q.text for q in script.questions(variant)] + list(script.BACKCHANNELS) + list(script.INTERRUPT_OPENERS)


def audio_per_chunk(config: dict) -> int:
    frames = 100  # one second of log-mel
    return math.ceil(frames / 2) // int(config.get("audio_pool_step", 5))


def step_loss(model: Venus, batch: Batch, asked_head: torch.nn.Module | None = None,
              asked_weight: float = 0.0, frames: FrameCache | None = None) -> tuple[torch.Tensor, dict]:
    x = model.llm.embed(batch.ids.clamp(min=0))
    aud = model.encode_audio(batch.mel)  # (B, C, n, hidden)
    rows, cols, values = [], [], []
    for i, layout in enumerate(batch.layouts):
        pos = torch.from_numpy(layout.audio_pos.reshape(-1))
        rows.append(torch.full_like(pos, i))
        cols.append(pos)
        values.append(aud[i].reshape(-1, aud.shape[-1]))
    if batch.views:
        if frames is not None and not model.tower_learns():
            emb = [model.encode_view(v, frames.tower(key, lambda v=v: model.vision.tower(v)))
                   for v, key in zip(batch.views, batch.view_keys)]
        else:
            emb = [model.encode_view(v) for v in batch.views]
        for i, entries in enumerate(batch.image_index):
            for pos, view_ids in entries:
                p = torch.from_numpy(pos)
                rows.append(torch.full_like(p, i))
                cols.append(p)
                values.append(torch.cat([emb[v] for v in view_ids]))
    x = x.index_put((torch.cat(rows), torch.cat(cols)), torch.cat(values))
    mask = batch.targets != IGNORE
    logits = model.llm(x, mask, model.last_at_only)
    ce = F.cross_entropy(logits, batch.targets[mask], reduction="none")
    w = batch.weights[mask]
    loss = (ce * w).sum() / w.sum()
    extra = {}
    if asked_head is not None and batch.asked and asked_weight:
        want = torch.tensor([q for *_, q in batch.asked])
        now = asked_head(torch.stack([aud[i, r].mean(0) for i, _, r, _ in batch.asked]))  # where the LLM decides
        heard = asked_head(torch.stack([aud[i, a:r + 1].mean((0, 1)) for i, a, r, _ in batch.asked]))
        loss = loss + asked_weight * (F.cross_entropy(now, want) + F.cross_entropy(heard, want))
        extra["asked"] = float((now.argmax(-1) == want).float().mean())
        extra["heard"] = float((heard.argmax(-1) == want).float().mean())
    with torch.no_grad():
        ok = (logits.argmax(-1) == batch.targets[mask]).float()
        kinds = batch.kinds[mask]
        stats = {"loss": float(loss.detach()), **extra}
        for i, name in enumerate(KINDS):
            if name and bool((kinds == i).any()):
                stats[name] = float(ok[kinds == i].mean())
    return loss, stats


def train(settings: TrainSettings, out: Path, cache_dir: Path, progress: bool = True,
          log: list | None = None, init: Path | None = None) -> dict:
    """Train and write the checkpoint to `out`; returns the record stored in out/train.json.

    `init`: a trained checkpoint whose LLM and audio encoder to start from (Omni starts from the Audio model).

    One thread for torch and for BLAS: on a shared 2-core machine a second thread mostly waits (three times
    slower measured under load), and one thread keeps the result bit-for-bit reproducible.
    """
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1, user_api="blas"):
            return _train(settings.resolved(), out, cache_dir, progress, log, init)
    finally:
        torch.set_num_threads(threads)


def _train(s: TrainSettings, out: Path, cache_dir: Path, progress: bool, log: list | None,
           init_from: Path | None) -> dict:
    torch.manual_seed(s.seed)
    t0, cpu0 = time.monotonic(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        init = Path(tmp) / "init"
        write_tiny(init, s.variant, s.seed, llm=s.llm, audio=s.audio)
        reader = CheckpointReader(init)
        config = reader.config
        get = reader.get
        if init_from is not None:  # shared parts from the given checkpoint, the rest (vision) seeded fresh
            start = CheckpointReader(init_from)
            get = lambda name: start.get(name) if name in start else reader.get(name)  # noqa: E731
        model = Venus(config, get, s.variant)
        tok = Tokens(init)
    voices = TRAIN_VOICES[:s.voices] if s.voices else TRAIN_VOICES
    voices += shifted_voices(voices, s.shifted) if s.shifted else ()
    bank = ClipBank.load_or_make(phrases(s.variant), voices, cache_dir, progress)
    system_ids = tok.with_specials(s.system_prompt or "")
    slicing = Slicing.from_config(config) if s.variant == "omni" else None
    per_chunk = audio_per_chunk(config)
    if model.vision is not None and not s.train_tower:
        model.freeze_tower()
    media = [p for n, p in model.named_parameters() if not n.startswith("llm.") and p.requires_grad]
    texts = phrases(s.variant)  # the questions first, so a question's number is its class here
    asked_head = torch.nn.Linear(int(config["hidden_size"]), len(texts))
    stage1 = pretrain_audio(model, asked_head, bank, voices, texts, s.pretrain, s.seed, s.media_lr * 1.5, progress,
                            sequences=s.pretrain_sequences, anywhere=s.pretrain_anywhere)
    pooled = slicing is not None and s.frame_pool > 0
    frames = FrameCache() if pooled and not s.train_tower else None
    if slicing is not None:
        stage1["vision"] = pretrain_vision(model, slicing, FRAME_SIZES, s.pretrain_vision, s.seed, s.media_lr * 1.5,
                                           progress, pool=scene_pool(s.seed, s.frame_pool) if pooled else (),
                                           cache=frames)
    groups = [{"params": list(model.llm.parameters()), "lr": s.lr},
              {"params": media + list(asked_head.parameters()), "lr": s.media_lr}]
    opt = torch.optim.AdamW(groups, betas=(0.9, 0.98), weight_decay=0.0)
    base = [g["lr"] for g in opt.param_groups]
    mix = Mix(frame_pool=s.frame_pool, pool_seed=s.seed) if pooled else None
    bar = tqdm(range(s.steps), desc=f"training tiny {s.variant}", unit="step", disable=not progress)
    stats: dict = {}
    for step in bar:
        scale = min(1.0, (step + 1) / s.warmup) * 0.5 * (1 + math.cos(math.pi * step / s.steps))
        for g, lr in zip(opt.param_groups, base):
            g["lr"] = lr * max(scale, 0.02)
        sessions = [make_session(s.variant, bank, voices, s.chunks, [s.seed, step, i], mix=mix)
                    for i in range(s.batch)]
        batch = make_batch(sessions, tok, system_ids, per_chunk, slicing, s.answer_weight, frames)
        loss, stats = step_loss(model, batch, asked_head, s.asked_weight, frames)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        opt.step()
        bar.set_postfix({k: f"{v:.2f}" for k, v in stats.items()})
        if log is not None:
            log.append({"step": step, **stats})
    seconds, cpu = round(time.monotonic() - t0, 1), round(time.process_time() - cpu0, 1)
    held = evaluate(model, s, tok, system_ids, per_chunk, slicing, cache_dir, progress, asked_head)
    record = {"settings": s.as_dict(), "seconds": seconds, "cpu_seconds": cpu, "stage1": stage1, "final": stats,
              "heldout": held}
    from export.train.writer import write_trained

    write_trained(out, s.variant, s.seed, s.llm, s.audio, model.tensors(), record)
    return record


@torch.no_grad()
def evaluate(model: Venus, s: TrainSettings, tok: Tokens, system_ids: list[int], per_chunk: int,
             slicing: Slicing | None, cache_dir: Path, progress: bool, asked_head: torch.nn.Module,
             sessions: int = 16) -> dict:
    """Teacher-forced accuracy per decision kind on held-out sessions (voices and orders training never saw)."""
    from export.train.voices import HELDOUT_VOICES

    bank = ClipBank.load_or_make(phrases(s.variant), HELDOUT_VOICES, cache_dir, progress)
    mix = Mix(speed=0.0, colour=False)
    totals: dict[str, list[float]] = {}
    for i in range(0, sessions, 4):
        batch = make_batch([make_session(s.variant, bank, HELDOUT_VOICES, s.chunks, [s.seed, HELDOUT_STREAM, j], heldout=True,
                                         mix=mix) for j in range(i, i + 4)], tok, system_ids, per_chunk, slicing)
        _, stats = step_loss(model, batch, asked_head, 1.0)
        for k, v in stats.items():
            totals.setdefault(k, []).append(v)
    return {k: round(float(np.mean(v)), 4) for k, v in totals.items()}

