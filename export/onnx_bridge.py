"""Calls into export.onnx (vision, audio and token2wav graphs), which another module owns, when present.

Its interface: build_onnx_parts(get, config, out_dir, precisions, progress) -> [part entry]
and verify_onnx_parts(bundle_dir, get, config) -> [row dict].
"""

from __future__ import annotations

import sys
from pathlib import Path

from export.checkpoint import CheckpointReader


def _module():
    try:
        import export.onnx as mod
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("export.onnx"):
            return None
        raise
    return mod if hasattr(mod, "build_onnx_parts") else None


def onnx_available() -> bool:
    return _module() is not None


def _relative(path: str, bundle: Path, out_dir: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        return str(p.resolve().relative_to(bundle.resolve()))
    if (bundle / p).is_file():
        return str(p)
    return str((out_dir / p).relative_to(bundle))


def build_onnx(reader: CheckpointReader, bundle: Path, encoders: list[str], key: str, prev: dict | None,
               progress: bool) -> list[dict]:
    """ONNX part entries, reused from `prev` when their inputs are unchanged and their files are present."""
    mod = _module()
    if mod is None:
        print("note: export.onnx is not available, so the bundle has no ONNX parts.", file=sys.stderr)
        return []
    old = [p for p in (prev or {}).get("parts", []) if p.get("kind") == "onnx"]
    sizes = (prev or {}).get("files", {})
    if old and all(p.get("inputs") == key for p in old) and all(
            (bundle / f).is_file() and (bundle / f).stat().st_size == sizes.get(f, {}).get("size")
            for p in old for f in p["files"]):
        print("skip onnx parts (inputs unchanged)", file=sys.stderr)
        return old
    out_dir = bundle / "onnx"
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = mod.build_onnx_parts(reader.get, reader.config, out_dir, list(encoders), progress)
    for e in entries:
        e["files"] = [_relative(f, bundle, out_dir) for f in e.get("files", [])]
        e["inputs"] = key
    return entries


def verify_onnx(bundle: Path, reader: CheckpointReader) -> list[dict]:
    mod = _module()
    if mod is None or not hasattr(mod, "verify_onnx_parts"):
        return []
    return list(mod.verify_onnx_parts(bundle, reader.get, reader.config))
