"""Building the ONNX half of a bundle: export each graph, derive FP16/INT8, describe every file."""

from __future__ import annotations

import json
import pathlib
import shutil
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import torch

from export.errors import ExportError
from export.onnx import probes, storage, token2wav_parts
from export.onnx.graphs import OPSET, GraphSpec, audio_spec, export_graph, flow_specs, vision_spec
from export.onnx.precision import normalise_precisions, to_fp16, to_int8_dynamic, to_int8_static
from export.torch_ref.token2wav_graphs import HiftVocoder
from export.torch_ref.token2wav_assets import NOISE_FRAMES, flow_noise
from export.torch_ref.weights import TensorGetter, has_tensor

CONTRACT_KEY = "venus.contract"
ENCODERS = ("vision", "audio")  # statically quantised; the token2wav graphs are quantised dynamically


@dataclass
class Planned:
    """One graph to build: its spec, INT8 calibration inputs, and a module traced for FP16 if special."""

    spec: GraphSpec
    calibration: list[dict[str, np.ndarray]]
    fp16_module: torch.nn.Module | None = None


def wants_vision(get: TensorGetter, config: dict[str, Any]) -> bool:
    """Omni checkpoints carry a vision tower; Audio ones (init_vision false) do not."""
    return bool(config.get("init_vision", True)) and "vision_config" in config and \
        has_tensor(get, "vpm.post_layernorm.weight")


@dataclass
class Plan:
    """What a checkpoint yields: graphs to export, and the token2wav models and contract if any."""

    items: list[Planned]
    terms: dict[str, Any] | None = None
    flow: torch.nn.Module | None = None
    hift: torch.nn.Module | None = None


def plan_parts(get: TensorGetter, config: dict[str, Any], token2wav_dir: pathlib.Path | None,
               n_timesteps: int | None, calibration: dict[str, list[dict[str, np.ndarray]]] | None = None,
               calibrate: bool = True, token2wav: bool = True) -> Plan:
    """The graphs this checkpoint yields, with INT8 calibration sets when `calibrate`."""
    calibration = calibration or {}
    planned: list[Planned] = []

    def calib(kind: str, make: Any) -> list[dict[str, np.ndarray]]:
        return calibration.get(kind) or (make() if calibrate else [])

    if wants_vision(get, config):
        spec = vision_spec(get, config)
        planned.append(Planned(spec, calib("vision", lambda: probes.vision_feeds(spec.module, seed=11))))
    if config.get("init_audio", True) and "audio_config" in config:
        spec = audio_spec(get, config)
        planned.append(Planned(spec, calib("audio", lambda: probes.audio_feeds(spec.module, seed=12))))
    asset = token2wav_parts.asset_dir(config, token2wav_dir) if token2wav else None
    plan = Plan(planned)
    if asset is not None:
        steps = token2wav_parts.timesteps(config, n_timesteps)
        flow, hift = token2wav_parts.load(asset, steps)
        terms = token2wav_parts.contract(flow, hift, steps)
        plan.terms, plan.flow, plan.hift = terms, flow, hift
        for spec in flow_specs(flow, hift):
            spec.contract = terms
            spec.sources = [str(asset / name) for name in spec.sources]
            half = HiftVocoder(hift, half_stack=True).eval() if spec.name == "token2wav_vocoder" else None
            planned.append(Planned(spec, [], half))
    if not planned:
        raise ExportError("The checkpoint has no vision tower, audio encoder or token2wav assets to export to ONNX.")
    return plan


def _io(values: Any) -> list[dict[str, Any]]:
    out = []
    for v in values:
        dims = [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type).name
        out.append({"name": v.name, "shape": dims, "dtype": dtype})
    return out


def describe(path: pathlib.Path, root: pathlib.Path, name: str, precision: str, spec: GraphSpec,
             method: str) -> dict[str, Any]:
    """A manifest part entry for one graph file (shapes and dtypes read back from the file)."""
    model = onnx.load(str(path), load_external_data=False)
    files = storage.files_of(path)
    entry = {"name": name, "kind": "onnx", "file": str(path.relative_to(root)), "precision": precision,
             "opset": OPSET, "inputs": _io(model.graph.input), "outputs": _io(model.graph.output),
             "sources": spec.sources, "method": method, "bytes": sum(f.stat().st_size for f in files)}
    if len(files) > 1:  # weights past 2 GB live in a side file that belongs to the same part
        entry["files"] = [str(f.relative_to(root)) for f in files]
    if spec.contract:
        entry["contract"] = spec.contract
    return entry


def _stamp(path: pathlib.Path, spec: GraphSpec, precision: str) -> None:
    """Record part, precision and contract inside the file, so `verify` needs no manifest."""
    model = onnx.load(str(path), load_external_data=False)  # side-file references stay as they are
    del model.metadata_props[:]
    for key, value in (("venus.part", spec.name), ("venus.precision", precision),
                       (CONTRACT_KEY, json.dumps(spec.contract))):
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))


def build_precision(item: Planned, fp32: pathlib.Path, dst: pathlib.Path, precision: str) -> str:
    """Write one precision of a graph; returns how it was made (for the manifest)."""
    spec = item.spec
    if precision == "fp32":
        storage.save(storage.load(fp32), dst)
        return "torch.onnx.export (legacy tracer)"
    if precision == "fp16":
        if item.fp16_module is not None:
            export_graph(GraphSpec(spec.name, item.fp16_module, spec.inputs, spec.outputs, spec.dynamic), dst)
            return "torch.onnx.export with the convolution stack in float16; F0, phase and STFT in float32"
        to_fp16(fp32, dst)
        return "onnxruntime float16 conversion (FP32 inputs/outputs; positions, softmax, norms in FP32)"
    if spec.name in ENCODERS:
        to_int8_static(fp32, dst, item.calibration)
        return f"onnxruntime static QDQ int8 (per-channel weights, {len(item.calibration)} calibration inputs)"
    to_int8_dynamic(fp32, dst)
    return "onnxruntime dynamic int8 (MatMul/Gemm weights; activations quantised at run time)"


def build_onnx_parts(get: TensorGetter, config: dict[str, Any], out_dir: pathlib.Path, precisions: list[str],
                     progress: bool = True, token2wav_dir: pathlib.Path | None = None,
                     n_timesteps: int | None = None,
                     calibration: dict[str, list[dict[str, np.ndarray]]] | None = None) -> list[dict[str, Any]]:
    """Export every ONNX part of a checkpoint into `out_dir`, one file per part and precision.

    Returns manifest entries whose `file` is relative to `out_dir`. token2wav is built when
    `token2wav_dir` (or <config _name_or_path>/assets/token2wav) holds flow.yaml/flow.pt/hift.pt.
    """
    from tqdm import tqdm

    wanted = normalise_precisions(precisions)
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plan = plan_parts(get, config, token2wav_dir, n_timesteps, calibration, calibrate="int8" in wanted)
    planned, terms = plan.items, plan.terms
    work = out_dir / ".onnx-work"
    work.mkdir(exist_ok=True)
    entries: list[dict[str, Any]] = []
    bar = tqdm(total=len(planned) * (len(wanted) + 1), desc="onnx", unit="graph", disable=not progress)
    try:
        for item in planned:
            name = item.spec.name
            bar.set_postfix_str(f"{name} fp32 trace")
            fp32 = work / f"{name}.fp32.onnx"
            export_graph(item.spec, fp32)
            bar.update()
            for precision in wanted:
                bar.set_postfix_str(f"{name} {precision}")
                dst = out_dir / f"{name}.{precision}.onnx"
                method = build_precision(item, fp32, dst, precision)
                _stamp(dst, item.spec, precision)
                entries.append(describe(dst, out_dir, name, precision, item.spec, method))
                bar.update()
    finally:
        bar.close()
        shutil.rmtree(work, ignore_errors=True)
    if terms is not None:  # the voice-prompt graphs (campplus, speech tokenizer) run at build time only
        noise_path = out_dir / token2wav_parts.NOISE_FILE
        np.save(noise_path, flow_noise(token2wav_parts.NOISE_SEED).numpy())
        entries.append({"name": "token2wav_noise", "kind": "npy", "file": noise_path.name, "precision": "fp32",
                        "opset": None, "inputs": [], "bytes": noise_path.stat().st_size,
                        "outputs": [{"name": "noise", "shape": [1, 80, NOISE_FRAMES],
                                     "dtype": "float32"}],
                        "sources": [], "method": "seeded sampler noise shared by every token2wav precision"})
    return entries
