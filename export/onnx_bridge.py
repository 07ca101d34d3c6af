"""Calls into export.onnx (vision, audio and token2wav graphs), which another module owns, when present.

Its interface: build_onnx_parts(get, config, out_dir, precisions, progress) -> [part entry]
and verify_onnx_parts(bundle_dir, get, config) -> [row dict].
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from export.checkpoint import CheckpointReader

ONNX_KINDS = ("onnx", "npy")


def _module():
    try:
        import export.onnx as mod

        mod.build_onnx_parts  # noqa: B018  (loads the builders, which import torch and onnx)
    except ImportError as e:  # e.g. onnx or onnxruntime not installed: GGUF parts can still be built
        print(f"note: export.onnx cannot be imported ({e}).", file=sys.stderr)
        return None
    except AttributeError:
        return None
    return mod


def onnx_available() -> bool:
    return _module() is not None


def _relative(path: str, bundle: Path, out_dir: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        return str(p.resolve().relative_to(bundle.resolve()))
    if (bundle / p).is_file():
        return str(p)
    return str((out_dir / p).relative_to(bundle))


def _token2wav_kwargs(fn, reader: CheckpointReader) -> dict:
    """The checkpoint's assets/token2wav, for functions that take `token2wav_dir` (config paths may be names)."""
    assets = reader.path / "assets" / "token2wav"
    if assets.is_dir() and "token2wav_dir" in inspect.signature(fn).parameters:
        return {"token2wav_dir": assets}
    return {}


def normalise_entry(e: dict, bundle: Path, out_dir: Path, key: str) -> dict:
    """A part entry in the manifest's schema: unique name, role, bundle-relative files, I/O under shapes."""
    e = dict(e)
    role, precision = e.pop("name"), e.get("precision", "")
    files = e.pop("files", None) or ([e.pop("file")] if "file" in e else [])
    shapes = e.pop("shapes", {}) or {}
    for io in ("inputs", "outputs", "opset"):
        if io in e:
            shapes[io] = e.pop(io)
    return {"name": f"{role}-{precision}" if precision else role, "kind": e.pop("kind", "onnx"), "role": role,
            "precision": precision, "files": [_relative(f, bundle, out_dir) for f in files], "shapes": shapes,
            "inputs_key": key, **e}


def build_onnx(reader: CheckpointReader, bundle: Path, encoders: list[str], key: str, prev: dict | None,
               progress: bool) -> list[dict]:
    """ONNX part entries, reused from `prev` when their inputs are unchanged and their files are present."""
    mod = _module()
    if mod is None:
        print("note: export.onnx is not available, so the bundle has no ONNX parts.", file=sys.stderr)
        return []
    old = [p for p in (prev or {}).get("parts", []) if p.get("kind") in ONNX_KINDS]
    sizes = (prev or {}).get("files", {})
    if old and all(p.get("inputs_key") == key for p in old) and all(
            (bundle / f).is_file() and (bundle / f).stat().st_size == sizes.get(f, {}).get("size")
            for p in old for f in p["files"]):
        print("skip onnx parts (inputs unchanged)", file=sys.stderr)
        return old
    out_dir = bundle / "onnx"
    out_dir.mkdir(parents=True, exist_ok=True)
    fn = mod.build_onnx_parts
    entries = fn(reader.get, reader.config, out_dir, list(encoders), progress, **_token2wav_kwargs(fn, reader))
    return [normalise_entry(e, bundle, out_dir, key) for e in entries]


def _row(r: dict) -> dict:
    """A verify row from export.onnx's (part, precision, metric, tolerance, passed) form."""
    if {"check", "value", "limit", "ok"} <= set(r):
        return {k: r[k] for k in ("part", "check", "value", "limit", "ok")}
    part = str(r.get("part", "onnx"))
    if r.get("precision") not in (None, "-"):
        part = f"{part}-{r['precision']}"
    metric = r.get("metric")
    if metric is None or metric not in r:
        return {"part": part, "check": "graph", "value": str(r.get("error", "missing")), "limit": "present",
                "ok": bool(r.get("passed", False))}
    return {"part": part, "check": f"{metric} vs torch", "value": f"{r[metric]:.2e}",
            "limit": f"<= {r.get('tolerance', float('nan')):.2g}", "ok": bool(r.get("passed", False))}


def verify_onnx(bundle: Path, reader: CheckpointReader) -> list[dict]:
    mod = _module()
    if mod is None or not hasattr(mod, "verify_onnx_parts"):
        return []
    fn = mod.verify_onnx_parts
    return [_row(r) for r in fn(bundle, reader.get, reader.config, **_token2wav_kwargs(fn, reader))]
