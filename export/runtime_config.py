"""The checkpoint facts a device needs at run time, resolved at build time into the manifest's `runtime` section.

A bundle must run where the checkpoint is not: everything the runtime used to
read from the checkpoint's config.json (audio chunking and positions, vision
slicing, the TTS boundary ids and whether projected hidden states are
normalised) is written here, with defaults resolved the way the reference
model resolves them, so the device never guesses.

manifest["runtime"] = {
  "audio":  {sample_rate, mel_bins, chunk_seconds, pool_step, max_positions},
  "vision": {scale_resolution, patch_size, max_slices, max_side}          (Omni only)
  "tts":    {text_eos_id, audio_bos_id, ids_from, normalize_projected_hidden, text_tokens},
}
"""

from __future__ import annotations

import json
from typing import Any

from export.checkpoint import CheckpointReader
from export.errors import ExportError

# Names of the TTS boundary tokens in the LLM vocabulary (used when tts_config's ids do not fit the text table).
TTS_EOS_TOKEN, TTS_BOS_TOKEN = "<|tts_eos|>", "<|tts_bos|>"


def _audio(config: dict[str, Any]) -> dict[str, Any]:
    ac = config.get("audio_config") or {}
    pool = int(config.get("audio_pool_step", 5))
    chunk = float(config.get("audio_chunk_length", 1.0))
    frames = round(chunk * 100)  # 100 log-mel frames a second
    if frames <= 0 or frames % (2 * pool):
        raise ExportError(f"audio_chunk_length {chunk} s gives {frames} log-mel frames, not a multiple of "
                          f"{2 * pool} (the encoder's stride 2 times audio_pool_step {pool}).")
    return {"sample_rate": 16000, "mel_bins": int(ac.get("num_mel_bins", 80)), "chunk_seconds": chunk,
            "pool_step": pool, "max_positions": int(ac.get("max_source_positions", 1500))}


def _vision(config: dict[str, Any]) -> dict[str, Any]:
    vc = config.get("vision_config") or {}
    return {"scale_resolution": int(config.get("scale_resolution", 448)),
            "patch_size": int(config.get("patch_size", vc.get("patch_size", 14))),
            "max_slices": int(config.get("max_slice_nums", 9)), "max_side": int(vc.get("image_size", 980))}


def _vocab_ids(reader: CheckpointReader, names: tuple[str, ...]) -> dict[str, int]:
    """Ids of single-entry tokens in the checkpoint's tokenizer.json (added tokens, then the base vocabulary)."""
    path = reader.path / "tokenizer.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    found = {t["content"]: int(t["id"]) for t in data.get("added_tokens", []) if t.get("content") in names}
    base = (data.get("model") or {}).get("vocab") or {}
    return {n: found[n] if n in found else int(base[n]) for n in names if n in found or n in base}


def _tts(reader: CheckpointReader) -> dict[str, Any]:
    tc = reader.config.get("tts_config") or {}
    rows = int(reader.info("tts.emb_text.weight").shape[0])
    eos, bos = tc.get("text_eos_token_id"), tc.get("audio_bos_token_id")
    source = "tts_config"
    if not all(isinstance(t, int) and 0 <= t < rows for t in (eos, bos)):
        ids = _vocab_ids(reader, (TTS_EOS_TOKEN, TTS_BOS_TOKEN))
        if len(ids) != 2 or not all(0 <= i < rows for i in ids.values()):
            raise ExportError(f"tts_config's text-end/audio-begin ids ({eos}, {bos}) do not fit the TTS text table "
                              f"of {rows} rows and the tokenizer has no {TTS_EOS_TOKEN}/{TTS_BOS_TOKEN} inside it, "
                              "so the TTS cannot be conditioned; fix tts_config in config.json.")
        eos, bos, source = ids[TTS_EOS_TOKEN], ids[TTS_BOS_TOKEN], "vocabulary"
    # MiniCPM-o's TTS config class defaults normalize_projected_hidden to False when the key is absent.
    return {"text_eos_id": int(eos), "audio_bos_id": int(bos), "ids_from": source,
            "normalize_projected_hidden": bool(tc.get("normalize_projected_hidden", False)), "text_tokens": rows}


def runtime_config(reader: CheckpointReader) -> dict[str, Any]:
    """The manifest's `runtime` section for this checkpoint."""
    out: dict[str, Any] = {}
    if reader.config.get("init_audio", True) and "audio_config" in reader.config:
        out["audio"] = _audio(reader.config)
    if reader.variant == "omni":
        out["vision"] = _vision(reader.config)
    if "tts.emb_text.weight" in reader:
        out["tts"] = _tts(reader)
    return out
