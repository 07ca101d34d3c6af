"""`venus-export build`: a checkpoint to a bundle (GGUF LLM and TTS, ONNX media parts, voice, manifest).

Each part carries a hash of its inputs (the source files it reads, its options
and the tool versions); a re-run reuses a part whose hash is unchanged and whose
files are still there, and removes files of parts no longer asked for. The
manifest's `runtime` section holds the checkpoint facts the device needs
(export/runtime_config.py), so a bundle never reads its source checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from edge.protocol.tokens import PROTOCOL_TOKENS
from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.fit import ENCODER_ORDER, check_fit
from export.llm_gguf import convert_llm
from export.manifest import (EXPORTER_VERSION, bundle_files, checkpoint_files, code_hash, hash_files, inputs_key,
                             new_manifest, sha256_file, try_load_manifest, write_manifest)
from export.onnx_bridge import build_onnx, onnx_available
from export.gguf_types import gguf_type
from export.quantize import quantize
from export.runtime_config import runtime_config
from export.trt_status import tensorrt_status
from export.tts_gguf import convert_tts, convert_tts_extras
from export.voice_prompt import SPEAKER_GRAPH, TOKENIZER_GRAPH, default_voice, write_voice

BASE = "F16"
CACHE = ".cache"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "added_tokens.json",
                   "special_tokens_map.json")


@dataclass
class BuildOptions:
    types: list[str] = field(default_factory=lambda: ["Q4_K_M"])
    tts_types: list[str] = field(default_factory=lambda: [BASE])
    encoders: list[str] = field(default_factory=lambda: ["fp16"])
    device: str = "cpu"
    context: int = 4096
    kv_type: str = "f16"
    onnx: bool = True
    dry_run: bool = False
    progress: bool = True
    threads: int = 0
    voice: Path | None = None  # reference recording of the bundle's voice; None: default_voice()


@dataclass
class Job:
    """One part to make: its manifest entry (less shapes) and the function that makes it."""

    name: str
    kind: str
    role: str
    precision: str
    files: list[str]
    inputs: str
    run: Callable[[], dict]

    def entry(self, shapes: dict) -> dict:
        return {"name": self.name, "kind": self.kind, "role": self.role, "precision": self.precision,
                "files": self.files, "shapes": shapes, "inputs_key": self.inputs}


def _validate(opts: BuildOptions) -> None:
    for t in opts.types + opts.tts_types:
        if gguf_type(t).needs_imatrix:
            raise ExportError(f"GGUF type {t} needs an importance matrix, which venus-export build does not "
                              "compute; make it with venus-quant sweep --imatrix on --keep-models.")
    for e in opts.encoders:
        if e not in ENCODER_ORDER:
            raise ExportError(f"Unknown encoder precision {e!r}; use some of {', '.join(ENCODER_ORDER)}.")
    if not opts.types:
        raise ExportError("No GGUF type asked for the LLM; give at least one with --types.")


def _source_subset(src: dict[str, dict], reader: CheckpointReader, prefixes: tuple[str, ...],
                   extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Hashes of the files a part reads: config, `extra` files and the shards holding its tensors."""
    shards = {reader.info(n).shard.name for n in reader.names() if n.startswith(prefixes)}
    wanted = {"config.json", *extra, *shards}
    return {rel: meta["sha256"] for rel, meta in src.items()
            if rel in wanted or any(rel.startswith(e + "/") for e in extra)}


def _gguf_jobs(reader: CheckpointReader, bundle: Path, opts: BuildOptions, src: dict, tools: dict) -> list[Job]:
    common = ("checkpoint", "names", "transforms", "gguf_stream")
    llm_key = inputs_key(EXPORTER_VERSION, "llm", _source_subset(src, reader, ("llm.",), TOKENIZER_FILES),
                         tools.get("gguf"), tools.get("numpy"), code_hash(*common, "tokens", "vocab", "llm_gguf"),
                         list(PROTOCOL_TOKENS))  # the runtime's token list, which the vocabulary must hold
    tts_key = inputs_key(EXPORTER_VERSION, "tts", _source_subset(src, reader, ("tts.",)), tools.get("gguf"),
                         code_hash(*common, "tts_gguf"))
    quant_tools = (tools.get("llama_cpp_python"), code_hash("quantize"))
    jobs: list[Job] = []
    for role, key, types in (("llm", llm_key, opts.types), ("tts", tts_key, opts.tts_types)):
        base_rel = f"{role}/{role}-{BASE}.gguf" if BASE in types else f"{CACHE}/{role}-{BASE}.gguf"
        base = bundle / base_rel
        convert = convert_llm if role == "llm" else convert_tts

        def make_base(base=base, convert=convert):
            return convert(reader, base, progress=opts.progress)
        jobs.append(Job(f"{role}-{BASE}" if BASE in types else f"{role}-base", "gguf", role, BASE, [base_rel], key,
                        make_base))
        if role == "tts":  # text/code embeddings and projectors, applied by the runtime itself
            extras_rel = "tts/tts-extras.npz"
            jobs.append(Job("tts-extras", "npz", "tts-extras", "float16", [extras_rel], key,
                            lambda out=bundle / extras_rel: convert_tts_extras(reader, out)))
        for t in types:
            if t == BASE:
                continue
            rel = f"{role}/{role}-{t}.gguf"
            def make(t=t, out=bundle / rel, base=base):
                quantize(base, out, t, opts.threads)
                return {"quantized_from": BASE}
            jobs.append(Job(f"{role}-{t}", "gguf", role, t, [rel], inputs_key(key, t, quant_tools), make))
    return jobs


def _reusable(prev: dict | None, job: Job, bundle: Path) -> dict | None:
    if not prev:
        return None
    for part in prev.get("parts", []) + prev.get("cache", []):
        if part.get("name") == job.name and part.get("inputs_key") == job.inputs and part.get("files") == job.files:
            sizes = prev.get("files", {}) | prev.get("cache_files", {})
            if all((bundle / f).is_file() and (bundle / f).stat().st_size == sizes.get(f, {}).get("size")
                   for f in job.files):
                return part
    return None


def _voice_part(reader: CheckpointReader, bundle: Path, opts: BuildOptions, onnx_parts: list[dict], src: dict,
                prev: dict | None) -> list[dict]:
    """The voice prompt, made with the checkpoint's own graphs, wherever the bundle can speak (token2wav built)."""
    encoder = next((p for p in onnx_parts if p.get("role") == "token2wav_encoder"), None)
    if encoder is None:
        return []
    reference = opts.voice or default_voice()
    assets = reader.path / "assets" / "token2wav"
    graphs = {g: src.get(f"assets/token2wav/{g}", {}).get("sha256") for g in (SPEAKER_GRAPH, TOKENIZER_GRAPH)}
    key = inputs_key(EXPORTER_VERSION, "voice", sha256_file(reference), graphs, code_hash("voice_prompt",
                                                                                           "voice_features"))
    old = next((p for p in (prev or {}).get("parts", []) if p.get("role") == "token2wav-voice"), None)
    sizes = (prev or {}).get("files", {})
    intact = old is not None and all((bundle / f).is_file() and (bundle / f).stat().st_size ==
                                     sizes.get(f, {}).get("size") for f in old["files"])
    if intact and old.get("inputs_key") == key:
        tqdm.write("skip token2wav-voice (inputs unchanged)", file=sys.stderr)
        return [old]
    tqdm.write(f"make token2wav-voice from {reference.name}", file=sys.stderr)
    spk = next((i["shape"] for i in encoder["shapes"].get("inputs", []) if i["name"] == "spk_embedding"), [1, 192])
    codebook = int((reader.config.get("tts_config") or {}).get("num_audio_tokens", 6562)) - 1
    return [write_voice(bundle, reference, assets, codebook, int(spk[-1]), key, opts.voice is None,
                        max(1, opts.threads))]


def build(checkpoint: Path, bundle: Path, opts: BuildOptions) -> dict:
    """Build (or bring up to date) the bundle at `bundle`; returns its manifest."""
    reader = CheckpointReader(checkpoint)
    _validate(opts)
    fit = check_fit(reader.config, reader.variant, opts.device, opts.types, opts.encoders, opts.tts_types[0],
                    opts.context, opts.kv_type)
    runtime = runtime_config(reader)
    if opts.voice is not None and not opts.voice.is_file():
        raise ExportError(f"The reference voice {opts.voice} does not exist; give a WAV file with --voice.")
    prev = try_load_manifest(bundle) if bundle.is_dir() else None
    manifest = new_manifest(reader.variant)
    tools = manifest["tools"]
    src = hash_files(checkpoint, checkpoint_files(checkpoint), (prev or {}).get("source", {}).get("files"),
                     "hash checkpoint", opts.progress)
    jobs = _gguf_jobs(reader, bundle, opts, src, tools)
    media = ("vpm.", "resampler.", "apm.", "audio_projection_layer.")
    onnx_key = inputs_key(EXPORTER_VERSION, "onnx", _source_subset(src, reader, media, ("assets",)),
                          sorted(opts.encoders), tools.get("onnx"), tools.get("onnxruntime"), tools.get("torch"),
                          code_hash("onnx", "torch_ref"))

    if opts.dry_run:
        for job in jobs:
            state = "reuse" if _reusable(prev, job, bundle) else "build"
            print(f"{state:6} {job.name:16} {job.precision:8} -> {', '.join(job.files)}")
        state = "build" if opts.onnx and onnx_available() else "skip"
        print(f"{state:6} onnx parts       {','.join(opts.encoders):8} -> onnx/")
        print(f"{state:6} token2wav-voice  {(opts.voice or default_voice()).name} -> voice/ (when token2wav is built)")
        print(f"target {opts.device}: " + ("fit checked" if fit.get("checked") else "fit not checked"))
        return manifest

    bundle.mkdir(parents=True, exist_ok=True)
    parts, cache = [], []
    for job in tqdm(jobs, desc="parts", unit="part", disable=not opts.progress, leave=False):
        old = _reusable(prev, job, bundle)
        if old is not None:
            tqdm.write(f"skip {job.name} (inputs unchanged)", file=sys.stderr)
            entry = old
        else:
            tqdm.write(f"make {job.name}", file=sys.stderr)
            entry = job.entry(job.run())
        (cache if job.files[0].startswith(CACHE) else parts).append(entry)
    base_shapes = {e["role"]: e["shapes"] for e in parts + cache if e["precision"] == BASE and e["kind"] == "gguf"}
    for e in parts:
        if e["shapes"].get("quantized_from") == BASE:  # a quantized file has its base's dimensions
            e["shapes"] = {**base_shapes.get(e["role"], {}), **e["shapes"]}
    if opts.onnx:
        onnx_parts = build_onnx(reader, bundle, opts.encoders, onnx_key, prev, opts.progress)
        parts += onnx_parts + _voice_part(reader, bundle, opts, onnx_parts, src, prev)

    keep = {f for p in parts + cache for f in p["files"]}
    made_before = set((prev or {}).get("files", {})) | set((prev or {}).get("cache_files", {}))
    for rel in sorted(made_before - keep):
        stale = (bundle / rel).resolve()
        if stale.is_relative_to(bundle.resolve()):  # never outside the bundle, whatever an old manifest says
            stale.unlink(missing_ok=True)  # a part no longer asked for
    manifest.update({
        "target": {"device": opts.device, "context": opts.context, "fit": fit},
        "source": {"path": str(checkpoint.resolve()), "files": src},
        "runtime": runtime,
        "parts": parts,
        "cache": cache,
        "tensorrt": tensorrt_status(),
    })
    prev_files = (prev or {}).get("files", {}) | (prev or {}).get("cache_files", {})
    manifest["files"] = hash_files(bundle, bundle_files(bundle), prev_files, "hash bundle", opts.progress)
    cache_rels = [f for p in cache for f in p["files"] if (bundle / f).is_file()]
    manifest["cache_files"] = hash_files(bundle, cache_rels, prev_files, "hash cache", opts.progress)
    write_manifest(bundle, manifest)
    return manifest
