"""`venus-quant recommend`: the best precision of a sweep that fits a device, by the export planner.

Quality comes from the sweep (measured on the model swept); memory and the
decode ceiling come from export.plan for the full-size Realtime-Venus model
on the device, so a sweep of a tiny checkpoint still answers for the real one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from quant.report import label, ok_rows


# An encoder precision whose measured KL on the LLM is below this (nats) costs nothing worth paying memory for.
NEGLIGIBLE_KL = 1e-3


@dataclass
class Candidate:
    row: dict
    encoder: str
    fit: object  # export.plan.FitResult
    encoder_kl: float | None = None  # measured effect of the encoder precision on the LLM's next-token distribution

    @property
    def quality_loss(self) -> float:
        """The LLM's KL plus the encoder's, where the encoder's is measured and not negligible."""
        enc = self.encoder_kl or 0.0
        return self.row["kl_mean"] + (enc if enc > NEGLIGIBLE_KL else 0.0)


@dataclass
class Recommendation:
    device: str
    label: str
    variant: str
    context: int
    candidates: list[Candidate] = field(default_factory=list)
    best: Candidate | None = None
    notes: list[str] = field(default_factory=list)


def _encoder_effects(data: dict) -> dict[str, float]:
    """Worst measured KL effect per encoder precision over the parts swept (empty if none were)."""
    out: dict[str, float] = {}
    for r in data.get("encoders", []):
        if r.get("status") == "ok" and r.get("llm_kl") is not None:
            out[r["precision"]] = max(out.get(r["precision"], 0.0), r["llm_kl"])
    return out


def recommend(sweep_dir: Path, device: str, variant: str = "omni", context: int = 4096,
              encoder: str = "auto", **plan_options) -> Recommendation:
    """Rank every measured precision x encoder precision the planner knows; `plan_options` go to plan_fit."""
    try:
        from export.plan import DEVICES, LLM_BITS, ONNX_BYTES, plan_fit
    except ImportError as e:
        raise ValueError(f"recommend needs the export planner (export.plan): {e}") from None
    path = Path(sweep_dir) / "results.json"
    if not path.is_file():
        raise ValueError(f"{sweep_dir} holds no results.json; run venus-quant sweep into it first")
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; choose from {', '.join(DEVICES)}")
    data = json.loads(path.read_text())
    effects = _encoder_effects(data)
    if encoder == "auto":
        encoders = sorted(effects, key=lambda e: -ONNX_BYTES.get(e, 0)) or ["fp16", "int8"]
    elif encoder in ONNX_BYTES:
        encoders = [encoder]
    else:
        raise ValueError(f"unknown encoder precision {encoder!r}; choose from auto, {', '.join(ONNX_BYTES)}")
    rec = Recommendation(device, DEVICES[device].label, variant, context)
    for row in ok_rows(data["rows"]):
        if row["type"] not in LLM_BITS:
            rec.notes.append(f"{label(row)} is not in the planner's table of GGUF types; left out")
            continue
        for enc in encoders:
            fit = plan_fit(device, variant, row["type"], enc, context, **plan_options)
            rec.candidates.append(Candidate(row, enc, fit, effects.get(enc)))
    fitting = [c for c in rec.candidates if c.fit.fits]
    realtime = [c for c in fitting if c.fit.realtime]
    pool = realtime or fitting
    if pool:
        # equal quality: an unmeasured encoder precision is not assumed harmless (higher precision first);
        # a measured one within NEGLIGIBLE_KL is, and the one leaving the most memory wins
        rec.best = min(pool, key=lambda c: (c.quality_loss,
                                            0 if c.encoder_kl is not None else -ONNX_BYTES.get(c.encoder, 0),
                                            -c.fit.free_gb))
        if not realtime:
            rec.notes.append("nothing that fits keeps up with real time on this device; the best fit is shown")
    return rec


def _fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def format_recommendation(rec: Recommendation) -> str:
    lines = [f"{rec.label} ({rec.device}), {rec.variant}, context {rec.context} tokens; quality measured by the "
             "sweep, memory and decode ceiling from the planner for the full-size model", ""]
    head = f"{'type':<15} {'enc':<5} {'fits':<4} {'total GB':>8} {'spare GB':>8} {'tok/s':>6} {'rt':<3} " \
           f"{'KL':>8} {'top-1':>6} {'listen/speak':>12} {'delegate':>8}"
    lines += [head, "-" * len(head)]
    for c in rec.candidates:
        r, f = c.row, c.fit
        lines.append(f"{label(r):<15} {c.encoder:<5} {'yes' if f.fits else 'no':<4} {f.total_gb:>8.2f} "
                     f"{f.free_gb:>8.2f} {f.decode_ceiling_tps:>6.1f} {'yes' if f.realtime else 'no':<3} "
                     f"{c.quality_loss:>8.5f} {r['top1']:>6.3f} {_fmt(r.get('decision_agree'), '.3f'):>12} "
                     f"{_fmt(r.get('delegate_agree'), '.3f'):>8}")
    lines.append("")
    lines += [f"note: {n}" for n in rec.notes]
    b = rec.best
    if b is None:
        hint = "--variant audio, " if rec.variant == "omni" else ""
        lines.append(f"nothing in this sweep fits {rec.device} for {rec.variant} at {rec.context} tokens; "
                     f"try {hint}--kv q8_0, --tts-type Q4_K_M, a shorter --context, or sweep smaller types")
    else:
        r, f = b.row, b.fit
        lines.append(f"recommend {label(r)} with {b.encoder} encoders on {rec.device}: kl {r['kl_mean']:.5f} "
                     f"top1 {r['top1']:.3f} listen/speak {_fmt(r.get('decision_agree'), '.3f')}; "
                     f"{f.total_gb:.2f} GB of {f.usable_gb:.2f} GB usable ({f.free_gb:.2f} GB spare), "
                     f"decode ceiling {f.decode_ceiling_tps:.1f} tok/s")
    return "\n".join(lines)
