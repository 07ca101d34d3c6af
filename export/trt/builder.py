"""Building TensorRT engines from a bundle's ONNX graphs, where TensorRT and a GPU are present.

Engines are tied to the GPU model and TensorRT version that built them, so each
record names both, with the compute capability and the profiles. Where an
engine cannot be built, the record says "kept ONNX because ..." and the
runtime uses onnxruntime (whose TensorRT provider can still build and cache
engines on the device). The vocoder's float64 phase path is demoted to float32
for TensorRT (rewrite.py); dynamic-INT8 graphs have no TensorRT form and stay ONNX.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import time
from importlib import metadata
from typing import Any

import onnx

from export.errors import ExportError
from export.trt.profiles import DIMENSIONS, describe_profile, profile_for, unsupported_ops, uses_float64
from export.trt.rewrite import demote_float64

ENGINE_PRECISIONS = ("fp16", "int8")


def tensorrt_version() -> str | None:
    for name in ("tensorrt", "tensorrt-cu12", "tensorrt-cu11", "tensorrt_libs"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    try:
        import tensorrt

        return str(tensorrt.__version__)
    except ImportError:
        return None


def gpu_info() -> dict[str, str] | None:
    """{"name", "compute_capability", "driver"} of GPU 0 from nvidia-smi, or None without a GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout.strip()
    except (subprocess.SubprocessError, OSError):
        return None
    if not out:
        return None
    name, capability, driver = (field.strip() for field in out.splitlines()[0].split(","))
    return {"name": name, "compute_capability": capability, "driver": driver}


def kept_onnx(part: str, precision: str, source: str, reason: str) -> dict[str, Any]:
    return {"name": part, "kind": "onnx-kept", "precision": precision, "file": source,
            "reason": f"kept ONNX because {reason}"}


def environment_reason() -> str | None:
    """Why no engine can be built here at all, or None when TensorRT and a GPU are both present."""
    version, gpu = tensorrt_version(), gpu_info()
    if version is None:
        return "TensorRT is not installed where the bundle was built"
    if gpu is None:
        return f"TensorRT {version} is installed but no NVIDIA GPU is visible"
    return None


def major_version(version: str | None) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return 0


def source_precision(precision: str, major: int) -> str:
    """Which ONNX graph an engine starts from.

    INT8 always starts from the QDQ graph (explicit quantisation). FP16 starts from the FP32
    graph on TensorRT 8-10, which choose FP16 kernels under the FP16 builder flag; TensorRT 11
    removed that flag (networks are strongly typed), so there it starts from the FP16 graph,
    whose touchy ops are already kept in FP32.
    """
    if precision == "int8":
        return "int8"
    return "fp16" if major >= 11 else "fp32"


def _source_graph(onnx_dir: pathlib.Path, part: str, precision: str, major: int) -> pathlib.Path | None:
    path = onnx_dir / f"{part}.{source_precision(precision, major)}.onnx"
    return path if path.is_file() else None


def build_engine(source: pathlib.Path, engine: pathlib.Path, part: str, precision: str,
                 workspace_gb: float = 4.0) -> dict[str, Any]:
    """Parse `source`, build one engine with the part's profile, write it; returns its record."""
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    major = major_version(trt.__version__)
    # TensorRT 8/9 need explicit batch asked for; 10 has it by default; 11 is always strongly typed.
    flags = 0 if major >= 10 else 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(source)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        return kept_onnx(part, precision, source.name, f"TensorRT's ONNX parser refused it: {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_gb * (1 << 30)))
    if major < 11:  # weak typing: let TensorRT pick FP16 (and, with QDQ scales, INT8) kernels
        config.set_flag(trt.BuilderFlag.FP16)
        if precision == "int8":
            config.set_flag(trt.BuilderFlag.INT8)
    model = onnx.load(str(source), load_external_data=False)
    profile_shapes = profile_for(part, model)
    profile = builder.create_optimization_profile()
    for name, shapes in profile_shapes.items():
        profile.set_shape(name, shapes["min"], shapes["opt"], shapes["max"])
    config.add_optimization_profile(profile)
    started = time.monotonic()
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        return kept_onnx(part, precision, source.name, "TensorRT could not build an engine for the profile "
                         f"{describe_profile(profile_shapes)} (see its log above)")
    engine.write_bytes(bytes(serialized))
    gpu = gpu_info() or {}
    return {"name": part, "kind": "tensorrt", "precision": precision, "file": engine.name,
            "source": source.name, "tensorrt": trt.__version__, "gpu": gpu.get("name"),
            "compute_capability": gpu.get("compute_capability"), "driver": gpu.get("driver"),
            "profiles": [describe_profile(profile_shapes)], "workspace_gb": workspace_gb,
            "build_seconds": round(time.monotonic() - started, 1), "bytes": engine.stat().st_size}


def build_trt_engines(onnx_dir: pathlib.Path, out_dir: pathlib.Path, precisions: list[str] | None = None,
                      parts: list[str] | None = None, workspace_gb: float = 4.0,
                      progress: bool = True) -> list[dict[str, Any]]:
    """One record per (part, precision): an engine, or why the ONNX graph is kept instead."""
    from tqdm import tqdm

    onnx_dir, out_dir = pathlib.Path(onnx_dir), pathlib.Path(out_dir)
    wanted = [p.lower() for p in (precisions or list(ENGINE_PRECISIONS))]
    unknown = sorted(set(wanted) - set(ENGINE_PRECISIONS))
    if unknown:
        raise ExportError(f"Unknown TensorRT precision {', '.join(unknown)}: use fp16 or int8.")
    # Graphs copied from the checkpoint (speaker embedding, tokenizer) have no runtime profile here.
    names = parts or sorted({p.name.split(".")[0] for p in onnx_dir.glob("*.onnx")} & set(DIMENSIONS))
    reason = environment_reason()
    major = major_version(tensorrt_version())
    records: list[dict[str, Any]] = []
    jobs = [(part, precision) for part in names for precision in wanted]
    for part, precision in tqdm(jobs, desc="tensorrt", unit="engine", disable=not progress):
        source = _source_graph(onnx_dir, part, precision, major)
        if source is None:
            records.append(kept_onnx(part, precision, f"{part}.*.onnx",
                                     f"the bundle has no {part} graph to build a {precision} engine from"))
            continue
        if reason is not None:
            records.append(kept_onnx(part, precision, source.name, reason))
            continue
        ops = unsupported_ops(source)
        if ops:
            records.append(kept_onnx(part, precision, source.name,
                                     f"it uses {', '.join(ops)} (dynamic INT8), which TensorRT does not implement"))
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        records.append(_build_one(source, out_dir, part, precision, workspace_gb))
    return records


def _build_one(source: pathlib.Path, out_dir: pathlib.Path, part: str, precision: str,
               workspace_gb: float) -> dict[str, Any]:
    """One engine; a float64 graph (the vocoder) is built from a float32-demoted copy."""
    work = out_dir / ".trt-work"
    graph, note = source, None
    if uses_float64(source):
        work.mkdir(exist_ok=True)
        graph = work / source.name
        demote_float64(source, graph)
        note = "float64 phase path demoted to float32 (TensorRT has no float64)"
    try:
        record = build_engine(graph, out_dir / f"{part}.{precision}.engine", part, precision, workspace_gb)
    except Exception as exc:  # TensorRT raises plain RuntimeErrors with long texts
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        record = kept_onnx(part, precision, source.name, f"the engine build failed: {first}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record["source"] = source.name
    if note and record["kind"] == "tensorrt":
        record["rewrite"] = note
    return record
