"""`venus-export verify`: a bundle's files against its manifest and, given the checkpoint, its numerics.

The runtime's bundle check first (edge/bundle/check.py, the one every node
runs): a problem is reported in one sentence and its part is not run. The manifest's runtime section must be there (and, given the
checkpoint, equal what the checkpoint resolves to); the voice prompt must match
its manifest entry (and be remade the same from its recording with the
checkpoint's graphs). With the checkpoint, every GGUF is run in llama.cpp and
compared to the PyTorch reference (KL divergence, top-1 agreement), and the
ONNX parts are checked by export.onnx's own verify when it is present.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from edge.bundle.check import check_bundle
from edge.protocol.tokens import PROTOCOL_TOKENS
from export.checkpoint import CheckpointReader
from export.gguf_types import TYPES, GgufType
from export.manifest import checkpoint_files, hash_files, load_manifest
from export.runtime_config import runtime_config
from export.verify_voice import voice_rows

PROMPT = ("<|im_start|>user\nHello, what is the weather today? Please check.<|im_end|>\n<|im_start|>assistant\n"
          "<|speak|>Sure, one moment.<delegate>find the weather for today</delegate><|turn_eos|><|listen|>")


def row(part: str, check: str, value: str, limit: str, ok: bool) -> dict:
    return {"part": part, "check": check, "value": value, "limit": limit, "ok": bool(ok)}


def check_files(bundle: Path, manifest: dict) -> tuple[list[dict], set[str]]:
    """The runtime's own bundle check (edge/bundle/check.py): one row per problem, or one 'all files' row;
    returns the rows and the set of files that failed ("manifest" when the manifest itself is malformed)."""
    problems = check_bundle(bundle, manifest)
    for p in problems:
        print(p.sentence)
    rows = [row(p.where, "bundle check", "refused", "accepted", False) for p in problems]
    if not rows:
        rows.append(row("bundle", "files", f"{len(manifest['files'])} files match, whole", "all", True))
    return rows, {p.where for p in problems}


def limits(precision: str) -> tuple[float, float]:
    """(KL bound, top-1 bound) against the torch reference for a GGUF of this type (export/gguf_types.py)."""
    t = TYPES.get(precision.upper(), GgufType(precision, 0.0))
    return t.kl_limit, t.top1_limit


def _gguf_rows(bundle: Path, manifest: dict, reader: CheckpointReader, bad: set[str], n_threads: int) -> list[dict]:
    from edge.backends.llama import LlamaError, LlamaModel
    from export.llm_reference import compare_logits, qwen3_logits, tts_logits

    rows: list[dict] = []
    llm_ref = tts_ref = None
    ids: list[int] = []
    codes = [int(c) for c in np.random.default_rng(0).integers(0, 6000, 24)]
    for part in manifest.get("parts", []):
        if part.get("kind") != "gguf" or part["role"] not in ("llm", "tts"):
            continue
        gguf = next(f for f in part["files"] if f.endswith(".gguf"))
        if set(part["files"]) & bad:
            rows.append(row(part["name"], "parity", "not run", "files intact", False))
            continue
        try:
            m = LlamaModel(bundle / gguf, 256, n_threads, has_vocab=part["role"] == "llm")
        except LlamaError as e:
            rows.append(row(part["name"], "load", str(e), "loads", False))
            continue
        with m:
            if part["role"] == "llm":
                if llm_ref is None:
                    ids = m.tokenize(PROMPT, special=True)
                    llm_ref = qwen3_logits(reader.get, reader.config, ids)
                single = sum(len(m.tokenize(tok, True)) == 1 and len(m.tokenize(tok, False)) > 1
                             for tok in PROTOCOL_TOKENS)
                rows.append(row(part["name"], "protocol tokens", f"{single}/{len(PROTOCOL_TOKENS)} control",
                                "all", single == len(PROTOCOL_TOKENS)))
                got, ref = m.logits_all(ids), llm_ref
            else:
                if tts_ref is None:
                    tts_ref = tts_logits(reader.get, reader.config, codes)
                got, ref = m.logits_all(codes), tts_ref
        cmp = compare_logits(ref, got)
        kl_lim, top_lim = limits(part["precision"])
        rows.append(row(part["name"], "KL vs torch", f"{cmp['kl']:.2e}", f"< {kl_lim:g}", cmp["kl"] < kl_lim))
        rows.append(row(part["name"], "top-1 vs torch", f"{cmp['top1']:.3f}", f">= {top_lim:g}",
                        cmp["top1"] >= top_lim))
    return rows


def verify(bundle: Path, checkpoint: Path | None = None, n_threads: int = 1) -> list[dict]:
    """All verification rows for the bundle (and the checkpoint, when given)."""
    manifest = load_manifest(bundle)
    rows, bad = check_files(bundle, manifest)
    if "manifest" in bad:  # its paths and parts cannot be trusted, so nothing further is read
        return rows
    has_runtime = isinstance(manifest.get("runtime"), dict)
    rows.append(row("runtime", "section", "present" if has_runtime else "missing", "present", has_runtime))
    if not has_runtime:
        print("The manifest has no runtime section, so a device cannot run the bundle; rebuild it with this "
              "venus-export build.")
    if checkpoint is None:
        return rows + voice_rows(bundle, manifest, bad, None)
    reader = CheckpointReader(checkpoint)
    if has_runtime:
        same = runtime_config(reader) == manifest["runtime"]
        rows.append(row("runtime", "vs checkpoint", "same" if same else "differs", "same", same))
    rows += voice_rows(bundle, manifest, bad, reader.path / "assets" / "token2wav")
    src = manifest.get("source", {}).get("files", {})
    now = hash_files(checkpoint, checkpoint_files(checkpoint), src, "hash checkpoint")
    same = {k: v["sha256"] for k, v in now.items()} == {k: v["sha256"] for k, v in src.items()}
    rows.append(row("checkpoint", "sha256", "same as built" if same else "differs", "same", same))
    if not same:
        print(f"{checkpoint} is not the checkpoint this bundle was built from (its file hashes differ).")
    rows += _gguf_rows(bundle, manifest, reader, bad, n_threads)
    from export.onnx_bridge import ONNX_KINDS, verify_onnx

    onnx_parts = [p for p in manifest.get("parts", []) if p.get("kind") in ONNX_KINDS]
    if any(f in bad for p in onnx_parts for f in p["files"]):
        rows.append(row("onnx", "parity", "not run", "files intact", False))
    elif onnx_parts:  # a bundle built with --no-onnx has none to check
        rows += [row(str(r["part"]), str(r["check"]), str(r["value"]), str(r["limit"]), r["ok"])
                 for r in verify_onnx(bundle, reader)]
    return rows


def format_table(rows: list[dict]) -> str:
    head = ("part", "check", "value", "limit", "ok")
    cells = [head] + [(r["part"], r["check"], r["value"], r["limit"], "ok" if r["ok"] else "FAIL") for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(len(head))).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
