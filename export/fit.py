"""Refuse, at build time, a bundle that will not fit its target device (numbers from export.plan)."""

from __future__ import annotations

import sys

from edge.formats import ONNX_PRECISIONS
from export.errors import ExportError

ENCODER_ORDER = tuple(reversed(ONNX_PRECISIONS))  # most compact first


def check_fit(config: dict, variant: str, device: str, llm_types: list[str], encoders: list[str],
              tts_type: str, context: int, kv_type: str = "f16") -> dict:
    """Every requested LLM type must fit with the most compact requested encoder precision.

    Returns what the manifest records; raises ExportError naming the numbers when a type does not fit.
    """
    try:
        from export.plan import DEVICES, KV_BITS, Qwen3Shape, plan_fit
    except ImportError:
        print("warning: export.plan is not available, so the fit check is skipped.", file=sys.stderr)
        return {"checked": False, "reason": "export.plan is not available"}
    if device not in DEVICES:
        raise ExportError(f"Unknown target device {device!r}; use one of {', '.join(DEVICES)}.")
    if kv_type not in KV_BITS:
        raise ExportError(f"Unknown KV cache type {kv_type!r}; use one of {', '.join(KV_BITS)}.")
    shape = Qwen3Shape(
        layers=int(config["num_hidden_layers"]), hidden=int(config["hidden_size"]),
        heads=int(config["num_attention_heads"]),
        kv_heads=int(config.get("num_key_value_heads", config["num_attention_heads"])),
        head_dim=int(config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]),
        ffn=int(config["intermediate_size"]), vocab=int(config["vocab_size"]))
    encoder = min(encoders, key=lambda e: ENCODER_ORDER.index(e) if e in ENCODER_ORDER else len(ENCODER_ORDER))
    rows = []
    for t in llm_types:
        try:
            r = plan_fit(device, variant, t, encoder, context, tts_type=tts_type, kv_type=kv_type, shape=shape)
        except ValueError as e:
            print(f"warning: the planner cannot size {t} ({e}), so its fit check is skipped.", file=sys.stderr)
            rows.append({"llm_type": t, "checked": False})
            continue
        if not r.fits:
            raise ExportError(f"Refusing the bundle: the LLM as {t} with {encoder} encoders, a {tts_type} TTS and a "
                              f"{kv_type} KV cache of {context} tokens on {device} {r.reason}")
        rows.append({"llm_type": t, "encoder_precision": encoder, "total_gb": r.total_gb, "usable_gb": r.usable_gb,
                     "free_gb": r.free_gb, "decode_ceiling_tps": r.decode_ceiling_tps})
    return {"checked": True, "device": device, "context": context, "kv_type": kv_type, "rows": rows}
