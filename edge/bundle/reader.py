"""Opening a Venus bundle: the manifest is checked before anything is loaded.

Checks, each failing with one sentence: the manifest's format, the bundle
check shared with venus-export verify (check.py: paths, symlinks, unlisted
files, sizes, sha256, structure, variant, device), the runtime section (the checkpoint facts the device needs;
the source checkpoint is never read), the variant (omni needs a vision graph),
the precision asked for, and the device (a bundle fitted to another device is refused; a TensorRT
engine built for another GPU or TensorRT falls back to its ONNX graph, with a
note saying so).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from edge.bundle.check import check_bundle
from edge.bundle.manifest import ManifestError, load_manifest
from edge.bundle.runtime import RuntimeConfig, RuntimeConfigError, read_runtime
from edge.formats import GGUF_PICK_ORDER, ONNX_PRECISIONS

log = logging.getLogger(__name__)

GGUF_ORDER = GGUF_PICK_ORDER  # most precise first: the pick when none is named
ONNX_ORDER = ONNX_PRECISIONS
GRAPHS = ("vision", "audio", "token2wav_encoder", "token2wav_step", "token2wav_vocoder")


class BundleError(ValueError):
    """A bundle that cannot be used; the message is one sentence saying what and how to fix it."""


@dataclass
class Bundle:
    root: Path
    manifest: dict
    variant: str
    llm: Path
    llm_precision: str
    tts: Path | None
    tts_extras: Path | None
    graphs: dict[str, Path] = field(default_factory=dict)  # graph name -> ONNX file
    graph_precision: str = "fp32"
    engines: dict[str, Path] = field(default_factory=dict)  # graph name -> TensorRT engine usable here
    voice: Path | None = None  # token2wav voice prompt (npz: prompt_tokens, prompt_mel, spk_embedding)
    noise: Path | None = None  # token2wav sampler noise (npy), when the exporter wrote it apart
    token2wav: dict = field(default_factory=dict)  # the stream contract recorded by the exporter, if any
    runtime: RuntimeConfig = field(default_factory=lambda: RuntimeConfig(None, None, None))
    notes: list[str] = field(default_factory=list)  # fallbacks taken, one sentence each


def read_manifest(root: Path) -> dict:
    """The manifest, read and format-checked by the exporter's own reader (one format, one reader)."""
    if not root.is_dir():
        raise BundleError(f"bundle {root} is not a directory; give the folder that venus-export build wrote.")
    try:
        return load_manifest(root)
    except ManifestError as exc:
        raise BundleError(str(exc)) from None


def _pick(parts: list[dict], role: str, order: tuple[str, ...], want: str | None, what: str) -> dict | None:
    mine = [p for p in parts if p.get("role") == role]
    if not mine:
        return None
    if want is not None:
        for p in mine:
            if str(p.get("precision")).lower() == want.lower():
                return p
        have = ", ".join(sorted(str(p.get("precision")) for p in mine))
        raise BundleError(f"the bundle has no {what} in {want} (it has {have}); pick one of those or rebuild "
                          f"with venus-export build --types/--encoders {want}.")
    rank = {t.lower(): i for i, t in enumerate(order)}
    return min(mine, key=lambda p: rank.get(str(p.get("precision")).lower(), len(order)))


def _check_device(manifest: dict, device: str) -> None:
    target = str((manifest.get("target") or {}).get("device", "cpu"))
    if device == "cpu" or target in ("cpu", "", "any"):
        return
    if device != "auto" and target != device and not target.startswith(device):
        raise BundleError(f"the bundle was fitted to device {target}, not {device}; rebuild it with "
                          f"venus-export build --device {device}.")


def open_bundle(root: Path, *, precision: str | None = None, encoder_precision: str | None = None,
                device: str = "auto", say_notes: bool = True) -> Bundle:
    from edge.bundle.engines import usable_engines

    root = Path(root)
    manifest = read_manifest(root)
    problems = check_bundle(root, manifest)  # the same check as venus-export verify; nothing turns it off
    if problems:
        raise BundleError(problems[0].sentence)
    variant = manifest["variant"]
    try:
        runtime = read_runtime(manifest)
    except RuntimeConfigError as exc:
        raise BundleError(str(exc)) from None
    if runtime.audio is None:
        raise BundleError("the manifest's runtime section has no audio settings, so the audio encoder cannot be "
                          "driven; rebuild the bundle with this venus-export build.")
    _check_device(manifest, device)
    parts = [p for p in manifest.get("parts", []) if isinstance(p, dict)]
    llm = _pick([p for p in parts if p.get("kind") == "gguf"], "llm", GGUF_ORDER, precision, "LLM GGUF")
    if llm is None:
        raise BundleError("the bundle has no LLM GGUF part; rebuild it with venus-export build.")
    tts = _pick([p for p in parts if p.get("kind") == "gguf"], "tts", GGUF_ORDER, None, "TTS GGUF")
    onnx = [p for p in parts if p.get("kind") == "onnx"]
    graphs: dict[str, Path] = {}
    graph_precision = "fp32"
    for name in GRAPHS:
        mine = [{**p, "role": name} for p in onnx if str(p.get("role", "")).replace("-", "_") == name]
        has = {str(p.get("precision")).lower() for p in mine}
        want = encoder_precision if encoder_precision and encoder_precision.lower() in has else None
        if encoder_precision and want is None and mine and name in ("audio", "vision"):
            raise BundleError(f"the bundle has no {name} graph in {encoder_precision} (it has "
                              f"{', '.join(sorted(has))}); pick one of those or rebuild with --encoders.")
        part = _pick(mine, name, ONNX_ORDER, want, f"{name} graph")
        if part is not None:
            graphs[name] = root / next(f for f in part["files"] if f.endswith(".onnx"))
            if name == "audio":
                graph_precision = str(part.get("precision"))
    if "audio" not in graphs:
        raise BundleError("the bundle has no audio encoder graph (onnx part with role audio); rebuild it with "
                          "venus-export build and the export extra installed.")
    if variant == "omni" and "vision" not in graphs:
        raise BundleError("this omni bundle has no vision graph; rebuild it, or use an audio bundle.")
    if variant == "omni" and runtime.vision is None:
        raise BundleError("this omni bundle's manifest has no runtime.vision settings (slicing), so frames cannot "
                          "be cut as the model expects; rebuild it with this venus-export build.")
    def files_of(*roles: str, ext: str = "") -> Path | None:
        return next((root / f for p in parts if str(p.get("role", p.get("name"))).replace("_", "-") in roles
                     for f in p.get("files", []) if f.endswith(ext)), None)

    voice = files_of("token2wav-voice", ext=".npz")
    noise = files_of("token2wav-noise", ext=".npy")
    extras = files_of("tts-extras", ext=".npz") or next(
        (root / f for f in (tts or {}).get("files", []) if f.endswith(".npz")), None)
    contract = next((dict(p["contract"]) for p in parts  # the stream contract each token2wav graph carries
                     if str(p.get("role", "")).startswith("token2wav") and isinstance(p.get("contract"), dict)), {})
    bundle = Bundle(root, manifest, variant, root / llm["files"][0], str(llm.get("precision")),
                    root / tts["files"][0] if tts else None, extras,
                    graphs, graph_precision, voice=voice, noise=noise, token2wav=contract, runtime=runtime)
    bundle.engines, notes = usable_engines(root, graphs)
    bundle.notes.extend(notes)
    for note in bundle.notes if say_notes else ():
        log.warning("venus bundle: %s", note)
    return bundle


def bundle_dir(config: dict, key: str) -> Path:
    """The bundle folder named by a session setting (`bundle`, or `voice` for `--voice bundle:DIR`)."""
    arg = config.get(key) or ""
    if not arg:
        raise BundleError("the Venus bundle needs its folder: --bundle DIR (or --frontend bundle:DIR).")
    return Path(arg).expanduser()
