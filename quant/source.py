"""What a sweep starts from: a GGUF file, a bundle directory, or a checkpoint directory.

The reference is the highest-precision LLM GGUF available: the file itself,
the bundle's highest-precision LLM GGUF, or the F16 GGUF converted from a
checkpoint with the exporter (written once into the sweep directory).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from gguf import GGUFReader

from export.gguf_types import TYPES, by_ftype


class SourceError(ValueError):
    """The sweep input cannot be used; str() says why in one sentence."""


@dataclass
class Source:
    kind: str  # "gguf", "bundle" or "checkpoint"
    path: Path  # what the user named
    reference: Path  # the LLM GGUF every precision is compared with
    reference_type: str  # its precision, e.g. "F16"
    fingerprint: str  # identifies the input, so a resumed sweep refuses a different one
    encoders: dict[str, dict[str, Path]] = field(default_factory=dict)  # part -> precision -> ONNX file
    config: dict = field(default_factory=dict)  # the manifest-style `runtime` section that sizes the runtime's encoders


def gguf_info(path: Path) -> tuple[str, str]:
    """(architecture, precision name) of a GGUF file."""
    try:
        r = GGUFReader(str(path))
    except Exception as e:  # gguf raises bare ValueErrors and struct errors on damaged files
        raise SourceError(f"{path} is not a readable GGUF file ({e})") from None
    def field_value(key: str):
        f = r.fields.get(key)
        return None if f is None else f.contents()
    arch = field_value("general.architecture") or "?"
    ftype = field_value("general.file_type")
    if ftype is None:
        return str(arch), "F32"
    t = by_ftype(int(ftype))
    return str(arch), t.name if t is not None else f"ftype {ftype}"


def _fingerprint(path: Path) -> str:
    st = path.stat()
    return hashlib.sha256(f"{path.resolve()}:{st.st_size}:{int(st.st_mtime)}".encode()).hexdigest()[:16]


def _tokenizer_model(path: Path) -> str:
    f = GGUFReader(str(path)).fields.get("tokenizer.ggml.model")
    return "" if f is None else str(f.contents())


def _from_gguf(path: Path, kind: str, given: Path) -> Source:
    arch, ptype = gguf_info(path)
    if arch in ("", "?"):
        raise SourceError(f"{path} has no general.architecture; it is not an LLM GGUF")
    if _tokenizer_model(path) in ("", "none"):
        # llama.cpp aborts the process when asked to tokenize with such a model (the TTS's audio codes)
        raise SourceError(f"{path.name} has no text vocabulary (a TTS or embedding-only model); "
                          "the sweep measures the LLM, whose next-token distributions are over text")
    return Source(kind, given, path, ptype, _fingerprint(path))


def _manifest(bundle: Path) -> dict:
    try:
        return json.loads((bundle / "manifest.json").read_text())
    except json.JSONDecodeError as e:
        raise SourceError(f"{bundle / 'manifest.json'} is not valid JSON (line {e.lineno})") from None


def _manifest_parts(bundle: Path) -> list[dict]:
    manifest = _manifest(bundle)
    # "cache" holds parts kept out of the bundle proper, such as the F16 base a quantized LLM came from
    return [p for p in manifest.get("parts", []) + manifest.get("cache", []) if isinstance(p, dict)]


def _config(ckpt: str | Path | None) -> dict:
    """The encoder facts of a bundle's `runtime` section, computed as the exporter computes them from a
    checkpoint's config.json (MiniCPM-o's defaults where there is none)."""
    from export.runtime_config import _audio, _vision

    config: dict = {}
    if ckpt is not None and str(ckpt):
        try:
            config = json.loads((Path(ckpt) / "config.json").read_text())
        except (OSError, ValueError):
            config = {}
    return {"audio": _audio(config), "vision": _vision(config)}


def _bundle_llm(bundle: Path) -> Path:
    """The bundle's highest-precision LLM GGUF."""
    ranked = []
    for part in _manifest_parts(bundle):
        if part.get("kind") == "gguf" and part.get("role") == "llm":
            for rel in part.get("files", []):
                if rel.endswith(".gguf") and (bundle / rel).is_file():
                    ranked.append((bundle / rel, str(part.get("precision", ""))))
    if not ranked:
        raise SourceError(f"bundle {bundle} lists no LLM GGUF that is present; rebuild it with venus-export build")
    order = list(TYPES)  # highest precision first
    return min(ranked, key=lambda fp: order.index(fp[1]) if fp[1] in TYPES else len(order))[0]


def _encoder_role(part: dict) -> str | None:
    """"audio" or "vision" for an encoder part entry (by role, else by name such as "audio-fp16")."""
    role = part.get("role") or str(part.get("name", "")).replace(".", "-").split("-")[0]
    return role if part.get("kind", "onnx") == "onnx" and role in ("audio", "vision") else None


def _onnx_file(part: dict) -> str | None:
    files = part.get("files") or ([part["file"]] if part.get("file") else [])
    return next((str(f) for f in files if str(f).endswith(".onnx")), None)


def _bundle_encoders(bundle: Path) -> dict[str, dict[str, Path]]:
    """part role ("audio", "vision") -> precision -> ONNX graph file."""
    out: dict[str, dict[str, Path]] = {}
    for part in _manifest_parts(bundle):
        role, rel = _encoder_role(part), _onnx_file(part)
        if role and rel and (bundle / rel).is_file():
            out.setdefault(role, {})[str(part.get("precision", "fp32"))] = bundle / rel
    return out


def resolve(path: str | Path, work_dir: Path, progress: bool = True) -> Source:
    """Find (or build) the reference GGUF for `path`; conversions land in `work_dir`."""
    given = Path(path)
    if given.is_file():
        if given.suffix != ".gguf":
            raise SourceError(f"{given} is a file but not a .gguf; give a GGUF, a bundle or a checkpoint directory")
        return _from_gguf(given, "gguf", given)
    if not given.is_dir():
        raise SourceError(f"{given} does not exist; give a GGUF file, a bundle or a checkpoint directory")
    if (given / "manifest.json").is_file():
        src = _from_gguf(_bundle_llm(given), "bundle", given)
        src.encoders = _bundle_encoders(given)
        # the runtime reads its encoder facts from the manifest's runtime section (edge/bundle/runtime.py)
        src.config = dict(_manifest(given).get("runtime") or _config(None))
        return src
    if (given / "config.json").is_file():
        return _from_checkpoint(given, work_dir, progress)
    raise SourceError(f"{given} is neither a bundle (no manifest.json) nor a checkpoint (no config.json)")


def _from_checkpoint(ckpt: Path, work_dir: Path, progress: bool) -> Source:
    try:
        from export.checkpoint import CheckpointReader
        from export.errors import ExportError
        from export.llm_gguf import convert_llm
    except ImportError as e:
        raise SourceError(f"reading a checkpoint needs the exporter ({e}); install venus-edge[export]") from None
    ref = work_dir / "reference-F16.gguf"
    stamp = work_dir / "reference-F16.source"
    fp = _checkpoint_fingerprint(ckpt)
    if not (ref.is_file() and stamp.is_file() and stamp.read_text() == fp):
        try:
            convert_llm(CheckpointReader(ckpt), ref, progress=progress)
        except ExportError as e:
            raise SourceError(str(e)) from None
        stamp.write_text(fp)
    src = _from_gguf(ref, "checkpoint", ckpt)
    src.fingerprint = fp
    src.config = _config(ckpt)
    return src


def checkpoint_encoders(src: Source, work_dir: Path, precisions: list[str], progress: bool = True) -> str:
    """Build the checkpoint's encoder graphs with the exporter into work_dir/onnx; returns why not, or ''."""
    try:
        from export.checkpoint import CheckpointReader
        from export.onnx_bridge import onnx_available
    except ImportError as e:
        return f"the exporter is not importable ({e})"
    if not onnx_available():
        return "this exporter cannot build ONNX graphs yet (export.onnx.build_onnx_parts is missing)"
    import export.onnx as eo

    out = work_dir / "onnx"
    stamp = out / "source"
    index = out / "parts.json"
    wanted = sorted(set(precisions) | {"fp32"})
    key = f"{src.fingerprint} {','.join(wanted)}"
    if not (stamp.is_file() and stamp.read_text() == key and index.is_file()):
        out.mkdir(parents=True, exist_ok=True)
        reader = CheckpointReader(src.path)
        entries = eo.build_onnx_parts(reader.get, reader.config, out, wanted, progress)
        index.write_text(json.dumps(entries, default=str))
        stamp.write_text(key)
    for part in json.loads(index.read_text()):
        role, rel = _encoder_role(part), _onnx_file(part)
        if role and rel:
            f = Path(rel)
            path = f if f.is_absolute() else (out / f if (out / f).is_file() else work_dir / f)
            if path.is_file():
                src.encoders.setdefault(role, {})[str(part.get("precision", "fp32"))] = path
    return "" if src.encoders else "the exporter built no audio or vision graph for this checkpoint"


def _checkpoint_fingerprint(ckpt: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(ckpt.glob("*.safetensors")) + [ckpt / "config.json"]:
        st = p.stat()
        h.update(f"{p.name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]
