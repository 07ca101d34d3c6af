#!/usr/bin/env python3
"""Build or refresh a bundle's TensorRT engines on the device, keyed by TensorRT version and GPU.

    engines.py key                         print this device's key, e.g. trt10.3.0-orin-nano-sm87
    engines.py refresh BUNDLE [--precision auto|fp16|int8] [--shapes FILE] [--keep-old] [--dry-run]

Precision "auto" follows the bundle manifest: an int8 (QDQ) graph becomes an INT8 engine, the rest
FP16. Shape profiles come from --shapes or from a manifest part's "trt_profile" ({input: [min, opt, max]}).

Engines land in BUNDLE/engines/<key>/ with a stamp per engine (the ONNX file's sha256);
BUNDLE/engines/current points at this device's key. An engine whose ONNX changed, or a key
that changed (JetPack upgrade, another board), is rebuilt instead of failing at load time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TRTEXEC_PLACES = ("/usr/src/tensorrt/bin/trtexec", "/usr/local/bin/trtexec")


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
    raise RuntimeError("TensorRT is not installed: install JetPack's TensorRT (apt install tensorrt), "
                       "or skip engines and let onnxruntime's TensorRT provider cache its own.")


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
        raise RuntimeError("no NVIDIA GPU found (no Jetson device tree, nvidia-smi failed): engines need the GPU "
                           "they will run on.")
    name, cap = (s.strip() for s in out.stdout.splitlines()[0].split(",", 1))
    return f"{_slug(name)}-sm{cap.replace('.', '')}"


def device_key() -> str:
    return f"trt{trt_version()}-{gpu_id()}"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def trtexec_command(trtexec: str, onnx: Path, engine: Path, precision: str,
                    shapes: dict[str, list[str]] | None) -> list[str]:
    """shapes: input name -> [min, opt, max], each like '1x80x100'."""
    cmd = [trtexec, f"--onnx={onnx}", f"--saveEngine={engine}", "--skipInference"]
    # INT8 keeps FP16 on for layers without calibration scales (the graphs carry QDQ nodes).
    cmd += ["--fp16"] if precision == "fp16" else ["--int8", "--fp16"]
    if shapes:
        for flag, i in (("--minShapes", 0), ("--optShapes", 1), ("--maxShapes", 2)):
            cmd.append(f"{flag}=" + ",".join(f"{name}:{dims[i]}" for name, dims in shapes.items()))
    return cmd


def find_trtexec() -> str:
    found = shutil.which("trtexec") or next((p for p in TRTEXEC_PLACES if os.access(p, os.X_OK)), None)
    if not found:
        raise RuntimeError("trtexec was not found (JetPack puts it in /usr/src/tensorrt/bin): "
                           "install the tensorrt package or pass --trtexec PATH.")
    return found


def manifest_parts(bundle: Path) -> dict[str, dict]:
    """Bundle-relative ONNX path -> its manifest part (empty when the bundle has no manifest)."""
    path = bundle / "manifest.json"
    if not path.is_file():
        return {}
    try:
        parts = json.loads(path.read_text()).get("parts", [])
    except (json.JSONDecodeError, AttributeError):
        raise RuntimeError(f"{path} is not a readable manifest; rebuild the bundle with venus-export build.") from None
    # a part names its files as "files" (a list) or "file" (one path)
    return {str(f): part for part in parts if isinstance(part, dict)
            for f in part.get("files", [part.get("file")] if part.get("file") else [])
            if str(f).endswith(".onnx")}


def dynamic_inputs(part: dict) -> list[str]:
    """Inputs whose manifest shape has a named (symbolic) dimension: TensorRT needs ranges for them."""
    return [str(i.get("name")) for i in part.get("inputs", []) if isinstance(i, dict)
            and any(isinstance(d, str) or d in (None, 0, -1) for d in i.get("shape", []))]


def refresh(bundle: Path, precision: str = "auto", shapes: dict | None = None, keep_old: bool = False,
            dry_run: bool = False, trtexec: str | None = None, key: str | None = None) -> list[str]:
    """Rebuild what is missing or stale; returns one line per ONNX graph saying what happened."""
    if not bundle.is_dir():
        raise RuntimeError(f"bundle {bundle} is not a directory; give the folder venus-export build wrote.")
    graphs = sorted(p for p in bundle.rglob("*.onnx") if "engines" not in p.relative_to(bundle).parts)
    if not graphs:
        raise RuntimeError(f"bundle {bundle} holds no ONNX graphs, so there is nothing to build engines from.")
    key = key or device_key()
    parts = manifest_parts(bundle)
    root = bundle / "engines"
    out_dir = root / key
    report = []
    for onnx in graphs:
        rel = onnx.relative_to(bundle)
        part = parts.get(str(rel), {})
        want = precision if precision != "auto" else ("int8" if part.get("precision") == "int8" else "fp16")
        profile = (shapes or {}).get(str(rel)) or part.get("trt_profile")
        engine = out_dir / rel.with_suffix(f".{want}.engine")
        unranged = [n for n in dynamic_inputs(part) if not isinstance(profile, dict) or n not in profile]
        if unranged:
            # trtexec would quietly fix such dimensions to 1; better no engine than a wrong one
            report.append(f"skipped     {rel}: dynamic inputs {', '.join(unranged)} need a shape range "
                          "(--shapes or the manifest's trt_profile); onnxruntime's TensorRT provider builds it instead")
            continue
        stamp_path = engine.with_suffix(".json")
        digest = sha256(onnx)
        stamp = json.loads(stamp_path.read_text()) if stamp_path.is_file() else {}
        if engine.is_file() and stamp.get("onnx_sha256") == digest and stamp.get("profile") == profile:
            report.append(f"up to date  {rel} -> {engine.relative_to(bundle)}")
            continue
        cmd = trtexec_command(trtexec or ("trtexec" if dry_run else find_trtexec()), onnx, engine, want,
                              profile if isinstance(profile, dict) else None)
        if dry_run:
            report.append("would run   " + " ".join(cmd))
            continue
        engine.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not engine.is_file():
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            raise RuntimeError(f"trtexec could not build {rel} ({want}): {' | '.join(tail)}")
        stamp_path.write_text(json.dumps({"onnx": str(rel), "onnx_sha256": digest, "precision": want,
                                          "profile": profile, "key": key}, indent=1))
        report.append(f"built       {rel} -> {engine.relative_to(bundle)}")
    if not dry_run:
        current = root / "current"
        if current.is_symlink() or current.exists():
            current.unlink()
        current.symlink_to(key)
        if not keep_old:  # engines of another TensorRT or GPU cannot load here
            for old in root.iterdir():
                if old.is_dir() and not old.is_symlink() and old.name != key:
                    shutil.rmtree(old)
                    report.append(f"removed     engines/{old.name} (built for another TensorRT or GPU)")
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("key")
    r = sub.add_parser("refresh")
    r.add_argument("bundle", type=Path)
    r.add_argument("--precision", choices=("auto", "fp16", "int8"), default="auto")
    r.add_argument("--shapes", type=Path, help="JSON: {onnx path in bundle: {input: [min, opt, max]}}")
    r.add_argument("--trtexec", help="path of trtexec (default: PATH, then /usr/src/tensorrt/bin)")
    r.add_argument("--keep-old", action="store_true", help="keep engines built for other keys")
    r.add_argument("--dry-run", action="store_true")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "key":
            print(device_key())
            return 0
        shapes = json.loads(a.shapes.read_text()) if a.shapes else None
        for line in refresh(a.bundle, a.precision, shapes, a.keep_old, a.dry_run, a.trtexec):
            print(line)
    except (RuntimeError, OSError, json.JSONDecodeError) as e:
        print(f"venus-edge engines: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
