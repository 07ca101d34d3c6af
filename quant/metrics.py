"""Quality metrics: next-token distributions, perplexity, chunk decisions, embeddings."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 (float32 loses the small KLs of Q8_0)."""
    x = np.asarray(logits, dtype=np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


@dataclass
class DistributionStats:
    kl_mean: float
    kl_p99: float
    kl_max: float
    top1: float  # fraction of positions whose argmax equals the reference's
    n: int


def compare_distributions(ref_logp: np.ndarray, logits: np.ndarray) -> DistributionStats:
    """KL(reference || candidate) per position and top-1 agreement, over (n, vocab) arrays."""
    if ref_logp.shape != logits.shape:
        raise ValueError(f"reference has shape {ref_logp.shape} but the candidate {logits.shape}; "
                         "were both run on the same evaluation text and vocabulary?")
    ref = np.asarray(ref_logp, dtype=np.float64)
    cand = log_softmax(logits)
    kl = np.maximum((np.exp(ref) * (ref - cand)).sum(axis=-1), 0.0)
    top1 = float(np.mean(ref.argmax(axis=-1) == cand.argmax(axis=-1)))
    return DistributionStats(float(kl.mean()), float(np.percentile(kl, 99)), float(kl.max()), top1, len(kl))


def perplexity(logits: np.ndarray, tokens: list[int]) -> float:
    """exp of the mean negative log-likelihood of tokens[1:] given the logits at positions [:-1]."""
    if len(tokens) < 2 or len(logits) != len(tokens):
        raise ValueError("perplexity needs one logit row per token and at least two tokens")
    logp = log_softmax(logits[:-1])
    nll = -logp[np.arange(len(tokens) - 1), np.asarray(tokens[1:])]
    return float(np.exp(nll.mean()))


@dataclass
class ChunkDecision:
    """What a model decided for one chunk of a replayed stream."""

    control: str  # "listen" or "speak": the larger of the two control-token logits after the chunk's prefill
    delegate: bool  # `<delegate>` was the argmax at some position of the chunk's (forced) output
    margin: float  # speak logit minus listen logit


def decision_agreement(ref: list[ChunkDecision], cand: list[ChunkDecision]) -> tuple[float, float]:
    """Fractions of chunks where the candidate makes the reference's listen/speak and delegate decisions."""
    if len(ref) != len(cand):
        raise ValueError(f"decision streams differ in length ({len(ref)} vs {len(cand)} chunks)")
    if not ref:
        return float("nan"), float("nan")
    control = np.mean([a.control == b.control for a, b in zip(ref, cand)])
    delegate = np.mean([a.delegate == b.delegate for a, b in zip(ref, cand)])
    return float(control), float(delegate)


@dataclass
class EmbeddingError:
    max_abs: float
    mean_abs: float
    rel_rms: float  # RMS of the error divided by the RMS of the reference
    min_cosine: float  # worst row-wise cosine similarity to the reference


def embedding_error(ref: np.ndarray, cand: np.ndarray) -> EmbeddingError:
    ref = np.asarray(ref, dtype=np.float64).reshape(-1, ref.shape[-1])
    cand = np.asarray(cand, dtype=np.float64).reshape(-1, cand.shape[-1])
    if ref.shape != cand.shape:
        raise ValueError(f"embeddings differ in shape: {ref.shape} vs {cand.shape}")
    d = cand - ref
    rms_ref = float(np.sqrt(np.mean(ref ** 2))) or 1.0
    cos = (ref * cand).sum(-1) / np.maximum(np.linalg.norm(ref, axis=-1) * np.linalg.norm(cand, axis=-1), 1e-12)
    return EmbeddingError(float(np.abs(d).max()), float(np.abs(d).mean()),
                          float(np.sqrt(np.mean(d ** 2))) / rms_ref, float(cos.min()))
