"""Numerical parity of a bundle's ONNX graphs with the PyTorch reference modules.

Each graph runs on seeded probes shaped like the runtime's inputs and is
compared with the torch module it was traced from; token2wav is also checked
end to end as a stream against the packaged reference modules. Tolerances:

- fp32: max |onnx - torch| <= 1e-4 x max(1, max |torch|)
- fp16: mean |onnx - torch| / mean |torch| <= 2e-2
- int8: mean |onnx - torch| / mean |torch| <= 0.15 (synthetic calibration; real data does better)
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import torch

from export.errors import ExportError
from export.onnx import probes, token2wav_parts
from export.onnx.build import CONTRACT_KEY, plan_parts
from export.onnx.precision import PRECISIONS
from export.onnx.session import open_session, runner
from export.torch_ref.token2wav_ref import ReferenceStream, split_windows
from export.torch_ref.weights import TensorGetter

TOLERANCES: dict[str, tuple[str, float]] = {
    "fp32": ("max_abs_err", 1e-4),
    "fp16": ("rel_mean_err", 2e-2),
    "int8": ("rel_mean_err", 0.15),
}


def _errors(pairs: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    diffs = np.concatenate([np.abs(np.asarray(g, np.float64) - r).ravel() for g, r in pairs])
    refs = np.concatenate([np.abs(np.asarray(r, np.float64)).ravel() for _, r in pairs])
    return {"max_abs_err": float(diffs.max()), "mean_abs_err": float(diffs.mean()),
            "rel_mean_err": float(diffs.mean() / max(refs.mean(), 1e-12)), "ref_scale": float(refs.max())}


def judge(part: str, precision: str, errors: dict[str, float], probes_used: int) -> dict[str, Any]:
    """One verify row: the errors, the tolerance that applies, and whether they are within it."""
    metric, limit = TOLERANCES[precision]
    if precision == "fp32":
        limit = limit * max(1.0, errors["ref_scale"])
    return {"part": part, "precision": precision, "probes": probes_used, **errors,
            "metric": metric, "tolerance": limit, "passed": bool(errors[metric] <= limit)}


def seeded_feeds(spec_inputs: dict[str, torch.Tensor], seed: int, count: int = 2,
                 vocab: int = 6561) -> list[dict[str, np.ndarray]]:
    """Random inputs with the example's shapes: codes as integers, times and phases in [0, 1)."""
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        feed = {}
        for name, example in spec_inputs.items():
            shape = tuple(example.shape)
            if example.dtype == torch.int64:
                feed[name] = rng.integers(0, vocab, shape).astype(np.int64)
            elif name in ("t", "dt", "rand_ini"):
                feed[name] = rng.random(shape, dtype=np.float32)
            elif name == "lookahead_pad":
                feed[name] = np.zeros(shape, np.float32)
            else:
                scale = 0.1 if name == "cache_source" else 1.0
                feed[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
        feeds.append(feed)
    return feeds


def _torch_outputs(module: torch.nn.Module, feed: dict[str, np.ndarray], names: list[str]) -> list[np.ndarray]:
    with torch.no_grad():
        out = module(*[torch.from_numpy(feed[n]) for n in names])
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def find_graph(bundle: pathlib.Path, part: str, precision: str) -> pathlib.Path | None:
    hits = sorted(bundle.rglob(f"{part}.{precision}.onnx"))
    return hits[0] if hits else None


def _stamped_contract(path: pathlib.Path) -> dict[str, Any]:
    props = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    return json.loads(props.get(CONTRACT_KEY, "{}"))


@dataclass
class StreamReference:
    """The packaged reference stream's output on the probe, computed once per verify."""

    inputs: Any
    windows: list[tuple[np.ndarray, bool]]
    reference: ReferenceStream
    waves: list[np.ndarray]
    mels: list[np.ndarray]


def stream_reference(flow: torch.nn.Module, hift: torch.nn.Module, n_timesteps: int) -> StreamReference:
    inputs, codes = probes.stream_inputs(seed=21, vocab=flow.vocab_size)
    reference = ReferenceStream(flow, hift, n_timesteps, hift_seed=5)
    reference.setup(inputs)
    windows = split_windows(codes)
    waves, mels = [], []
    for codes_window, last in windows:
        waves.append(reference.push(codes_window, last))
        mels.append(reference.last_mel)
    return StreamReference(inputs, windows, reference, waves, mels)


def stream_row(bundle: pathlib.Path, precision: str, ref: StreamReference, terms: dict[str, Any]
               ) -> dict[str, Any] | None:
    """The exported graphs as one stream vs the reference stream.

    FP32 is judged on the waveform. FP16/INT8 are judged on the flow's mel output: the vocoder
    turns a small mel difference into an F0, hence phase, drift, so the waveform error there
    says little about quality; it is still reported (wave_*).
    """
    paths = {g: find_graph(bundle, g, precision) for g in token2wav_parts.GRAPHS}
    noise_path = next(iter(sorted(bundle.rglob(terms["noise_file"]))), None)
    if any(p is None for p in paths.values()) or noise_path is None:
        return None
    runners = {g: runner(open_session(p)) for g, p in paths.items()}
    stream = token2wav_parts.graph_stream(runners, terms, np.load(noise_path), ref.reference.noise_for)
    stream.setup(ref.inputs.prompt_tokens, ref.inputs.prompt_mel, ref.inputs.spk_embedding)
    waves, mels = [], []
    for codes_window, last in ref.windows:
        waves.append(stream.push(codes_window, last))
        mels.append(stream.last_mel)
    wave = _errors(list(zip(waves, ref.waves)))
    if precision == "fp32":
        return judge("token2wav_stream", precision, wave, len(ref.windows))
    row = judge("token2wav_stream", precision, _errors(list(zip(mels, ref.mels))), len(ref.windows))
    row.update({f"wave_{k}": v for k, v in wave.items() if k != "ref_scale"}, judged_on="mel")
    return row


def verify_onnx_parts(bundle_dir: pathlib.Path, get: TensorGetter, config: dict[str, Any],
                      token2wav_dir: pathlib.Path | None = None,
                      parts: set[str] | None = None) -> list[dict[str, Any]]:
    """Rows of (part, precision, max_abs_err, mean_abs_err, tolerance, passed) for every graph found.

    `parts` limits the check to some parts (vision, audio, token2wav_*, token2wav_stream).
    """
    bundle = pathlib.Path(bundle_dir)
    if not bundle.is_dir():
        raise ExportError(f"The bundle directory {bundle} does not exist.")
    stamped = next(iter(sorted(bundle.rglob("token2wav_step.*.onnx"))), None)
    steps = _stamped_contract(stamped).get("n_timesteps") if stamped else None
    wants_t2w = parts is None or any(p.startswith("token2wav") for p in parts)
    plan = plan_parts(get, config, token2wav_dir, steps, calibrate=False, token2wav=wants_t2w)
    rows: list[dict[str, Any]] = []
    for item in plan.items:
        spec = item.spec
        if parts is not None and spec.name not in parts:
            continue
        if spec.name == "vision":
            feeds = probes.vision_feeds(spec.module, seed=31)
        elif spec.name == "audio":
            feeds = probes.audio_feeds(spec.module, seed=32)
        else:
            feeds = seeded_feeds(spec.inputs, seed=33, vocab=plan.flow.vocab_size)
        found = False
        for precision in PRECISIONS:
            path = find_graph(bundle, spec.name, precision)
            if path is None:
                continue
            found = True
            run = runner(open_session(path))
            pairs = []
            for feed in feeds:
                expected = _torch_outputs(spec.module, feed, list(spec.inputs))
                pairs.extend(zip(run(feed), expected))
            rows.append(judge(spec.name, precision, _errors(pairs), len(feeds)))
        if not found:
            rows.append({"part": spec.name, "precision": "-", "passed": False,
                         "error": f"no {spec.name}.<precision>.onnx in {bundle}"})
    if plan.terms is not None and (parts is None or "token2wav_stream" in parts):
        ref = stream_reference(plan.flow, plan.hift, plan.terms["n_timesteps"])
        for precision in PRECISIONS:
            row = stream_row(bundle, precision, ref, plan.terms)
            if row is not None:
                rows.append(row)
    return rows
