"""The one TensorRT engine builder: a bundle's ONNX graphs -> engines for this device, with a report per graph.

`build_engines(bundle)` reads the bundle's manifest (the exporter's own), and
for every ONNX part:
- skips, with a note, what TensorRT cannot take at all: dynamic-INT8 graphs
  (MatMulInteger and friends) and graphs with no shape table in shapes.py;
  onnxruntime runs those;
- takes the shape range of every dynamic input from the part's "shapes"
  (the exporter records inputs there) and the table in shapes.py;
- demotes a float64 graph (the vocoder's phase path) to float32 first;
- builds an INT8 engine from an int8 (QDQ) graph, an FP16 engine otherwise.

Each engine is built by a separate process that speaks trtexec's command line:
JetPack's trtexec where it is installed, else `python -m export.trt.pybuild`
(TensorRT's Python API, for pip installs that ship no trtexec). A process per
graph frees the builder's memory after each graph (it matters on 8 GB boards)
and keeps one crash to one graph. Every graph is attempted; engines/current
points at this device's key only when every graph that had to be built was.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from edge.bundle.engines import CURRENT, device_key, gpu_id, read_stamp, trt_version
from edge.bundle.manifest import ManifestError, load_manifest, sha256_file
from export.errors import ExportError
from export.trt.shapes import DIMENSIONS, unsupported_ops, uses_float64

TRTEXEC_PLACES = ("/usr/src/tensorrt/bin/trtexec", "/usr/local/bin/trtexec")
Shape = list[int]


@dataclass
class EngineJob:
    """One graph to build: where from, where to, and the (min, opt, max) shape of each dynamic input."""

    rel: pathlib.Path  # the ONNX file, relative to the bundle
    role: str
    precision: str  # of the engine: fp16 or int8
    profile: dict[str, tuple[Shape, Shape, Shape]] = field(default_factory=dict)

    def engine(self, key_dir: pathlib.Path) -> pathlib.Path:
        return key_dir / self.rel.with_suffix(f".{self.precision}.engine")


@dataclass
class Report:
    key: str
    lines: list[str] = field(default_factory=list)  # one per graph: built / up to date / skipped / FAILED
    failed: int = 0
    current: bool = False  # engines/current points at this key


def _role(part: dict) -> str:
    return str(part.get("role") or part.get("name") or "").replace("-", "_")


def _onnx_of(part: dict) -> str | None:
    return next((str(f) for f in part.get("files", []) if str(f).endswith(".onnx")), None)


def _inputs(part: dict, path: pathlib.Path) -> list[dict[str, Any]]:
    """Input names and shapes as the exporter recorded them, or read back from the graph where it did not."""
    recorded = (part.get("shapes") or {}).get("inputs")
    if recorded:
        return list(recorded)
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    weights = {t.name for t in model.graph.initializer}
    return [{"name": v.name, "shape": [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]}
            for v in model.graph.input if v.name not in weights]


def shape_profile(role: str, inputs: list[dict[str, Any]]) -> dict[str, tuple[Shape, Shape, Shape]]:
    """(min, opt, max) for every input with a named dimension; ExportError naming a dimension with no range."""
    table = DIMENSIONS[role]
    profile = {}
    for spec in inputs:
        dims = list(spec.get("shape") or [])
        if all(isinstance(d, int) and d > 0 for d in dims):
            continue  # a fixed shape needs no range
        unknown = [str(d) for d in dims if not isinstance(d, int) and str(d) not in table]
        if unknown or any(isinstance(d, int) and d <= 0 for d in dims):
            raise ExportError(f"input {spec.get('name')} of the {role} graph has a dimension "
                              f"({', '.join(unknown) or 'unnamed'}) with no range in export/trt/shapes.py")
        profile[str(spec["name"])] = tuple(  # type: ignore[assignment]
            [table[str(d)][i] if isinstance(d, str) else int(d) for d in dims] for i in range(3))
    return profile


def plan_jobs(bundle: pathlib.Path, manifest: dict) -> tuple[list[EngineJob], list[str]]:
    """The graphs to build, and a report line for each ONNX graph that is skipped on purpose."""
    jobs, skipped = [], []
    for part in manifest.get("parts", []):
        rel = _onnx_of(part) if isinstance(part, dict) and part.get("kind") == "onnx" else None
        if rel is None:
            continue
        role, path = _role(part), bundle / rel
        if role not in DIMENSIONS:
            skipped.append(f"skipped     {rel}: TensorRT has no shape table for the {role} graph, onnxruntime runs it")
            continue
        if not path.is_file():
            raise ExportError(f"bundle file {rel} is missing; copy the whole bundle again or rebuild it.")
        ops = unsupported_ops(path)
        if ops:
            skipped.append(f"skipped     {rel}: it uses {', '.join(ops)} (dynamic INT8), which TensorRT does not "
                           "implement; onnxruntime runs it")
            continue
        precision = "int8" if str(part.get("precision")).lower() == "int8" else "fp16"
        jobs.append(EngineJob(pathlib.Path(rel), role, precision, shape_profile(role, _inputs(part, path))))
    return jobs, skipped


def find_tool(trtexec: str | None = None) -> list[str]:
    """The command that builds one engine: trtexec (given, on PATH, JetPack's place) or TensorRT's Python API."""
    if trtexec:
        if not os.access(trtexec, os.X_OK):
            raise ExportError(f"trtexec {trtexec} is not an executable file; give its full path.")
        return [trtexec]
    found = shutil.which("trtexec") or next((p for p in TRTEXEC_PLACES if os.access(p, os.X_OK)), None)
    if found:
        return [found]
    try:
        import tensorrt  # noqa: F401
    except ImportError:
        raise ExportError("TensorRT is not installed here (neither trtexec nor its Python module), so no engine "
                          "can be built; on a Jetson install JetPack's tensorrt package.") from None
    return [sys.executable, "-m", "export.trt.pybuild"]


def planned_key(tensorrt: str | None = None, gpu: str | None = None) -> tuple[str, str]:
    """The engine key for --print-key and --dry-run, and a sentence on what stands in for an absent part.

    Given parts win; otherwise this machine's TensorRT and GPU; where one is absent its place in the key is
    <tensorrt> or <gpu>, so a workstation can still show the commands and paths a device will use."""
    missing = []
    if not tensorrt:
        try:
            tensorrt = trt_version()
        except RuntimeError:
            tensorrt = "<tensorrt>"
            missing.append("TensorRT is not installed here (give --tensorrt VERSION)")
    if not gpu:
        try:
            gpu = gpu_id()
        except RuntimeError:
            gpu = "<gpu>"
            missing.append("no NVIDIA GPU or Jetson is visible here (give --gpu NAME)")
    key = f"trt{tensorrt}-{gpu}"
    if not missing:
        return key, ""
    note = " and ".join(missing)
    return key, f"{note[0].upper()}{note[1:]}, so the key {key} holds a placeholder; a device fills in its own."


def _dims(shape: Shape) -> str:
    return "x".join(str(d) for d in shape)


def command(tool: list[str], onnx: pathlib.Path, engine: pathlib.Path, job: EngineJob, workspace_mb: int) -> list[str]:
    """trtexec's command line for one engine (its documented flags; pybuild takes the same)."""
    cmd = [*tool, f"--onnx={onnx}", f"--saveEngine={engine}", "--skipInference",
           f"--memPoolSize=workspace:{workspace_mb}M"]
    # INT8 keeps FP16 on for the layers between QDQ pairs, which carry no INT8 scales
    cmd += ["--int8", "--fp16"] if job.precision == "int8" else ["--fp16"]
    for flag, i in (("--minShapes", 0), ("--optShapes", 1), ("--maxShapes", 2)):
        if job.profile:
            cmd.append(f"{flag}=" + ",".join(f"{name}:{_dims(s[i])}" for name, s in job.profile.items()))
    return cmd


def _stamp(job: EngineJob, key: str, digest: str) -> dict[str, Any]:
    return {"onnx": str(job.rel), "onnx_sha256": digest, "precision": job.precision, "key": key,
            "profile": {name: [list(s) for s in shapes] for name, shapes in job.profile.items()}}


def _build_one(bundle: pathlib.Path, key_dir: pathlib.Path, job: EngineJob, key: str, tool: list[str],
               workspace_mb: int) -> str:
    """Build one engine; returns its report line (FAILED lines carry the tool's last words)."""
    source, engine = bundle / job.rel, job.engine(key_dir)
    digest = sha256_file(source)
    stamp = _stamp(job, key, digest)
    if engine.is_file() and read_stamp(engine) == stamp:
        return f"up to date  {job.rel} -> {engine.relative_to(bundle)}"
    engine.parent.mkdir(parents=True, exist_ok=True)
    engine.unlink(missing_ok=True)
    work = key_dir / ".work"
    graph, note = source, ""
    try:
        if uses_float64(source):  # TensorRT has no float64: build from a float32 copy
            from export.trt.rewrite import demote_float64

            work.mkdir(exist_ok=True)
            graph = work / source.name
            demote_float64(source, graph)
            note = " (float64 demoted to float32)"
        done = subprocess.run(command(tool, graph, engine, job, workspace_mb), capture_output=True, text=True)
    except OSError as exc:
        return f"FAILED      {job.rel}: {exc}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0 or not engine.is_file():
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:]) or f"exit status {done.returncode}"
        engine.unlink(missing_ok=True)
        return f"FAILED      {job.rel} ({job.precision}): {tail}"
    engine.with_suffix(".json").write_text(json.dumps(stamp, indent=1))
    return f"built       {job.rel} -> {engine.relative_to(bundle)}{note}"


def build_engines(bundle: pathlib.Path, *, key: str | None = None, trtexec: str | None = None,
                  workspace_gb: float = 4.0, keep_old: bool = False, dry_run: bool = False) -> Report:
    """Build what is missing or stale for this device; ExportError (one sentence) for a bundle it cannot read."""
    bundle = pathlib.Path(bundle)
    if not bundle.is_dir():
        raise ExportError(f"bundle {bundle} is not a directory; give the folder venus-export build wrote.")
    try:
        manifest = load_manifest(bundle)
    except ManifestError as exc:
        raise ExportError(str(exc)) from None
    jobs, skipped = plan_jobs(bundle, manifest)
    if not jobs and not skipped:
        raise ExportError(f"bundle {bundle} holds no ONNX graphs, so there is nothing to build engines from.")
    try:
        key = key or device_key()
    except RuntimeError as exc:
        raise ExportError(str(exc)) from None
    report = Report(key, list(skipped))
    root = bundle / "engines"
    key_dir = root / key
    workspace_mb = int(workspace_gb * 1024)
    tool = ["trtexec"] if dry_run and not trtexec else find_tool(trtexec)
    for job in jobs:
        if dry_run:
            report.lines.append("would run   " + " ".join(command(tool, bundle / job.rel, job.engine(key_dir), job,
                                                                     workspace_mb)))
            continue
        line = _build_one(bundle, key_dir, job, key, tool, workspace_mb)
        report.failed += line.startswith("FAILED")
        report.lines.append(line)
    if dry_run:
        return report
    current = root / CURRENT
    if current.is_symlink() or current.exists():
        current.unlink()  # a link to an older set, or to another device's, must not survive a partial build
    if report.failed == 0 and jobs:
        current.symlink_to(key)
        report.current = True
        if not keep_old:  # engines of another TensorRT or GPU cannot load here
            for old in sorted(root.iterdir()):
                if old.is_dir() and not old.is_symlink() and old.name != key:
                    shutil.rmtree(old)
                    report.lines.append(f"removed     engines/{old.name} (built for another TensorRT or GPU)")
    return report
