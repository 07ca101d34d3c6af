"""Native TensorRT engines of a bundle: found, checked against this device, or refused with a note.

Engines live in BUNDLE/engines/<key>/<graph path>.<precision>.engine with a
JSON stamp beside each ({key, onnx_sha256, precision}); the key names the
TensorRT version and the GPU (deploy/jetson/engines.py writes them). An engine
is usable only where TensorRT imports, a GPU is visible and the key matches.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
from pathlib import Path


def _local_key() -> str | None:
    """This device's engine key, or None where TensorRT or a GPU is missing."""
    try:
        import tensorrt  # noqa: F401  (only present on GPU machines)
    except ImportError:
        return None
    spec = importlib.util.spec_from_file_location(
        "venus_engines_key", Path(__file__).resolve().parents[3] / "deploy" / "jetson" / "engines.py")
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            return str(module.device_key())
        except (RuntimeError, OSError, FileNotFoundError):
            return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    name, _, cap = out.stdout.strip().partition(",")
    return f"trt{tensorrt.__version__}-" + re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-") + \
        f"-sm{cap.strip().replace('.', '')}"


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(8 << 20):
            h.update(block)
    return h.hexdigest()


def usable_engines(root: Path, graphs: dict[str, Path]) -> tuple[dict[str, Path], list[str]]:
    """graph name -> engine usable here, and one note per engine that cannot be used (ONNX is used instead)."""
    base = root / "engines"
    if not base.is_dir():
        return {}, []
    key = _local_key()
    found: dict[str, Path] = {}
    notes: list[str] = []
    for name, onnx in graphs.items():
        rel = onnx.relative_to(root)
        candidates = sorted(base.glob(f"*/{rel.with_suffix('')}.*.engine"))
        if not candidates:
            continue
        engine = next((c for c in candidates if c.relative_to(base).parts[0] == key), candidates[0])
        stamp_path = engine.with_suffix(".json")
        try:
            stamp = json.loads(stamp_path.read_text()) if stamp_path.is_file() else {}
        except json.JSONDecodeError:
            stamp = {}
        built_for = stamp.get("key") or engine.relative_to(base).parts[0]
        if key is None:
            notes.append(f"The TensorRT engine for {name} cannot run here (no TensorRT or no GPU), so {name} runs "
                         "from its ONNX graph instead.")
        elif built_for != key:
            notes.append(f"The TensorRT engine for {name} was built for {built_for}, not this device ({key}), so "
                         f"{name} runs from its ONNX graph instead; rebuild engines with deploy/jetson/engines.py "
                         "refresh.")
        elif stamp.get("onnx_sha256") and stamp["onnx_sha256"] != _sha(onnx):
            notes.append(f"The TensorRT engine for {name} was built from another version of its ONNX graph, so "
                         f"{name} runs from ONNX instead; rebuild engines with deploy/jetson/engines.py refresh.")
        else:
            found[name] = engine
    return found, notes
