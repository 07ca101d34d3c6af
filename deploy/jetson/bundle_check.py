#!/usr/bin/env python3
"""Does a bundle match a board profile's plan, and does it fit the board? Run by stage.sh before staging.

    deploy/jetson/bundle_check.py BUNDLE PROFILE.env

Prints one line per finding and exits 1 when the bundle does not fit the board or does not hold what the
profile plans (variant, LLM type, encoder precision, TTS type); 0 when it does. The memory figures come
from the planner (export/plan.py), sized with the bundle's own LLM dimensions, so a tiny test bundle and
a full MiniCPM-o bundle are each judged by what they hold.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ENCODER_ROLES = ("audio", "vision")


def read_profile(path: Path) -> dict[str, str]:
    """KEY=value lines of a profile (the planner writes them unquoted)."""
    out = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip().strip('"')
    return out


def _precisions(manifest: dict, roles: tuple[str, ...], kind: str) -> list[str]:
    return sorted({str(p.get("precision")) for p in manifest.get("parts", [])
                   if p.get("kind") == kind and p.get("role") in roles})


def mismatches(manifest: dict, profile: dict[str, str]) -> list[str]:
    """What the profile plans that the bundle does not hold, one sentence each."""
    board = profile.get("VENUS_BOARD", "this board")
    out = []
    variant = manifest.get("variant")
    if variant != profile.get("VENUS_VARIANT"):
        out.append(f"the bundle is the {variant} variant but the {board} plan is {profile.get('VENUS_VARIANT')}")
    for what, want, have in (
        ("LLM", profile.get("VENUS_LLM_TYPE"), _precisions(manifest, ("llm",), "gguf")),
        ("TTS", profile.get("VENUS_TTS_TYPE"), _precisions(manifest, ("tts",), "gguf")),
        ("encoder", profile.get("VENUS_ENCODER_PRECISION"), _precisions(manifest, ENCODER_ROLES, "onnx")),
    ):
        if want and want not in have:
            out.append(f"the {board} plan's {what} is {want} but the bundle holds {', '.join(have) or 'none'}")
    return out


def _pick(want: str | None, have: list[str], order: list[str]) -> str | None:
    """The precision the device will load: the planned one if present, else the most compact the bundle has."""
    if want in have:
        return want
    ranked = [h for h in order if h in have]
    return ranked[0] if ranked else (have[0] if have else None)


def fit(manifest: dict, profile: dict[str, str]) -> tuple[bool, str]:
    """Whether the bundle as the device would load it fits the board, by the planner's numbers."""
    from export.plan import LLM_BITS, ONNX_BYTES, Qwen3Shape, plan_fit

    llm_parts = [p for p in manifest.get("parts", []) if p.get("kind") == "gguf" and p.get("role") == "llm"]
    if not llm_parts:
        return False, "the bundle holds no LLM"
    by_bits = sorted(LLM_BITS, key=LLM_BITS.get)
    llm = _pick(profile.get("VENUS_LLM_TYPE"), _precisions(manifest, ("llm",), "gguf"), by_bits)
    tts = _pick(profile.get("VENUS_TTS_TYPE"), _precisions(manifest, ("tts",), "gguf"), by_bits) or "Q8_0"
    enc = _pick(profile.get("VENUS_ENCODER_PRECISION"), _precisions(manifest, ENCODER_ROLES, "onnx"),
                sorted(ONNX_BYTES, key=ONNX_BYTES.get)) or "fp16"
    s = next(p for p in llm_parts if p.get("precision") == llm).get("shapes") or {}
    try:
        shape = Qwen3Shape(layers=int(s["n_layers"]), hidden=int(s["hidden"]), heads=int(s["n_head"]),
                           kv_heads=int(s["n_head_kv"]), head_dim=int(s["head_dim"]), ffn=int(s["ffn"]),
                           vocab=int(s["vocab_size"]))
        r = plan_fit(profile["VENUS_BOARD"], str(manifest.get("variant")), llm, enc,
                     int(profile.get("VENUS_CONTEXT", "4096")), kv_type=profile.get("VENUS_KV_TYPE", "f16"),
                     tts_type=tts, frames_per_s=float(profile.get("VENUS_VISION_FPS") or 0), shape=shape)
    except (KeyError, ValueError) as exc:
        return False, f"the planner cannot size this bundle ({exc})"
    return r.fits, f"{llm} LLM, {enc} encoders, {tts} TTS: {r.reason.rstrip('.')}"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: bundle_check.py BUNDLE PROFILE.env", file=sys.stderr)
        return 2
    bundle, profile_path = Path(argv[0]), Path(argv[1])
    try:
        manifest = json.loads((bundle / "manifest.json").read_text())
        profile = read_profile(profile_path)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot read the bundle's manifest or the profile ({exc}).")
        return 1
    board = profile.get("VENUS_BOARD", profile_path.stem)
    fits, why = fit(manifest, profile)
    found = mismatches(manifest, profile)
    if not fits:
        found.insert(0, f"it does not fit {board}: {why}")
    for line in found:
        print(line + ".")
    if not found:
        print(f"the bundle matches the {board} plan; {why}.")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
