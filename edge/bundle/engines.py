"""Native TensorRT engines of a bundle: this device's key, and which engines may run here.

`venus-export engines BUNDLE` (export/trt/builder.py) writes
BUNDLE/engines/<key>/<graph path>.<precision>.engine with a JSON stamp beside
each ({key, onnx_sha256, precision, profile}), and points BUNDLE/engines/current
at <key> only once every graph it had to build was built. The key names the
TensorRT version and the GPU; it is computed here, in the installed runtime, so
the builder and the runtime cannot disagree about it. An engine is used only
where TensorRT imports, the key matches and its ONNX graph is unchanged.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from edge.bundle.manifest import sha256_file

CURRENT = "current"
REBUILD = "rebuild them with venus-export engines BUNDLE"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def trt_version() -> str:
    """TensorRT version from the override, the Python bindings, or the Debian package."""
    if os.environ.get("VENUS_TRT_VERSION"):
        return os.environ["VENUS_TRT_VERSION"]
    try:
        import tensorrt  # JetPack's bindings, seen through the venv's system site packages

        return str(tensorrt.__version__)
    except ImportError:
        pass
    for pkg in ("tensorrt", "libnvinfer10", "libnvinfer8"):
        try:
            out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
        except FileNotFoundError:
            break
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().split("-")[0]
    raise RuntimeError("TensorRT is not installed (JetPack: apt install tensorrt), so no engine can be built or "
                       "run here; onnxruntime runs the ONNX graphs instead.")


def gpu_id(root: str = "") -> str:
    """The GPU an engine is tied to: the Jetson module's model or the card's name, and its SM."""
    if os.environ.get("VENUS_GPU_ID"):
        return _slug(os.environ["VENUS_GPU_ID"])
    model = Path(root + "/proc/device-tree/model")
    if model.is_file():
        name = model.read_bytes().rstrip(b"\0").decode(errors="replace")
        name = re.sub(r"(?i)\b(nvidia|jetson|developer kit|engineering reference|super)\b", " ", name)
        return _slug(name) + "-sm87"  # every Orin GPU is compute capability 8.7
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        out = None
    if out is None or out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError("no NVIDIA GPU was found (no Jetson device tree, nvidia-smi failed), and engines are "
                           "tied to the GPU they run on.")
    name, cap = (s.strip() for s in out.stdout.splitlines()[0].split(",", 1))
    return f"{_slug(name)}-sm{cap.replace('.', '')}"


def device_key() -> str:
    """e.g. trt10.3.0-orin-nano-sm87; RuntimeError (one sentence) without TensorRT or a GPU."""
    return f"trt{trt_version()}-{gpu_id()}"


def _local_key() -> str | None:
    """This device's key where engines can run (TensorRT's Python module and a GPU), else None."""
    try:
        import tensorrt  # noqa: F401  (only present on GPU machines)
    except ImportError:
        return None
    try:
        return device_key()
    except RuntimeError:
        return None


def read_stamp(engine: Path) -> dict:
    try:
        stamp = json.loads(engine.with_suffix(".json").read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def usable_engines(root: Path, graphs: dict[str, Path]) -> tuple[dict[str, Path], list[str]]:
    """graph name -> engine usable here, and one note per graph whose engine cannot be used (ONNX runs)."""
    base = root / "engines"
    if not base.is_dir():
        return {}, []
    current = base / CURRENT
    if not current.is_dir():
        return {}, [f"The bundle's TensorRT engines are incomplete (no engines/{CURRENT}), so its graphs run from "
                    f"ONNX; {REBUILD}."]
    key_dir = current.resolve()
    built_for = key_dir.name
    key = _local_key()
    if key is None:
        return {}, ["The bundle's TensorRT engines cannot run here (no TensorRT or no GPU), so its graphs run from "
                    "ONNX."]
    if built_for != key:
        return {}, [f"The bundle's TensorRT engines were built for {built_for}, not this device ({key}), so its "
                    f"graphs run from ONNX; {REBUILD}."]
    found: dict[str, Path] = {}
    notes: list[str] = []
    for name, onnx in graphs.items():
        rel = onnx.relative_to(root)
        engine = next(iter(sorted(key_dir.glob(f"{rel.with_suffix('')}.*.engine"))), None)
        if engine is None:
            continue
        stamp = read_stamp(engine)
        if stamp.get("key") != key or stamp.get("onnx_sha256") != sha256_file(onnx):
            notes.append(f"The TensorRT engine for {name} was built from another version of its ONNX graph, so "
                         f"{name} runs from ONNX instead; {REBUILD}.")
        else:
            found[name] = engine
    return found, notes
