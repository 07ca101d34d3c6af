"""The bundle manifest: what a bundle holds, where it came from, and the hashes that prove it.

manifest.json (format "venus-bundle", version 1):
  variant, created, target {device, context, fit}, tools {package: version},
  source {path, files: {relative path: {sha256, size, mtime_ns}}},
  parts: [part entry], files: {relative path: {sha256, size}} for every file
  of the bundle except the manifest itself and dot-directories (build caches),
  tensorrt: {status, reason, ...}.

A part entry (export.onnx's entries are brought to this form by export.onnx_bridge):
  name        unique, e.g. "llm-Q4_K_M", "vision-fp16"
  kind        "gguf" | "onnx" | "npy" | "engine"
  role        "llm" | "tts" | "vision" | "audio" | "token2wav_step" | ...
  precision   a GGUF type (F16, Q4_K_M, ...) or fp32 / fp16 / int8
  files       bundle-relative paths of the files it consists of
  shapes      dimensions, graph inputs and outputs (name, shape, dtype)
  inputs_key  hash of everything the part was made from (source files, options, tool versions)
  ...         any further facts the part's builder adds (method, sources, contract)
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from importlib import metadata
from pathlib import Path

from tqdm import tqdm

from edge.bundle.manifest import FORMAT, FORMAT_VERSION, MANIFEST, ManifestError, sha256_file  # noqa: F401
from edge.bundle.manifest import load_manifest as _read_manifest
from export.errors import ExportError

# Bumped whenever a converter's output changes for the same inputs, so re-runs rebuild.
EXPORTER_VERSION = "1"
TOOLS = ("venus-edge", "gguf", "llama_cpp_python", "numpy", "safetensors", "tokenizers", "torch", "onnx",
         "onnxruntime", "tensorrt")


def tool_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in TOOLS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def code_hash(*modules: str) -> str:
    """sha256 over the source of the named export modules or packages, so a changed converter rebuilds."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in modules:
        path = root / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
        for f in files:
            if f.is_file():
                h.update(str(f.relative_to(root)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def inputs_key(*parts: object) -> str:
    """A stable hash of JSON-able build inputs."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def hash_files(root: Path, rels: list[str], previous: dict[str, dict] | None, desc: str,
               progress: bool = True) -> dict[str, dict]:
    """sha256 and size of each file; a hash recorded earlier is reused when size and mtime are unchanged."""
    previous = previous or {}
    out: dict[str, dict] = {}
    todo = []
    for rel in rels:
        st = (root / rel).stat()
        old = previous.get(rel)
        if old and old.get("size") == st.st_size and old.get("mtime_ns") == st.st_mtime_ns:
            out[rel] = old
        else:
            todo.append((rel, st))
    total = sum(st.st_size for _, st in todo)
    with tqdm(total=total, desc=desc, unit="B", unit_scale=True, disable=not progress or not todo, leave=False) as bar:
        for rel, st in todo:
            out[rel] = {"sha256": sha256_file(root / rel, bar), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    return dict(sorted(out.items()))


def checkpoint_files(ckpt: Path) -> list[str]:
    """Every regular file of a checkpoint directory (weights, config, tokenizer, assets)."""
    rels = (p.relative_to(ckpt) for p in ckpt.rglob("*") if p.is_file())
    return sorted(str(r) for r in rels if not any(part.startswith(".") for part in r.parts))  # no .git, .cache


def bundle_files(bundle: Path) -> list[str]:
    """Files the manifest must cover: all but the manifest, dot-directories and unfinished .partial files."""
    out = []
    for p in bundle.rglob("*"):
        rel = p.relative_to(bundle)
        if not p.is_file() or rel.parts[0].startswith(".") or p.name == MANIFEST or p.name.endswith(".partial"):
            continue
        out.append(str(rel))
    return sorted(out)


def load_manifest(bundle: Path) -> dict:
    try:
        return _read_manifest(bundle)
    except ManifestError as e:
        raise ExportError(str(e)) from None


def try_load_manifest(bundle: Path) -> dict | None:
    try:
        return load_manifest(bundle)
    except ExportError:
        return None


def write_manifest(bundle: Path, manifest: dict) -> None:
    tmp = bundle / (MANIFEST + ".partial")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    tmp.replace(bundle / MANIFEST)


def new_manifest(variant: str) -> dict:
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "exporter_version": EXPORTER_VERSION,
            "variant": variant, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "tools": tool_versions()}
