"""`verify` rows for the bundle's voice: the prompt file against the manifest and, given the checkpoint,
the prompt remade from the stored recording with the checkpoint's own graphs.

Tolerances: prompt codes identical; speaker vector and prompt mel within 1e-4 (max abs), since the same
float32 graphs and features run on the same 16-bit recording.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from export.voice_prompt import VOICE_NPZ, VOICE_WAV, VoicePrompt, check_prompt, make_prompt, read_reference

TOLERANCE = 1e-4


def _row(check: str, value: str, limit: str, ok: bool) -> dict:
    return {"part": "token2wav-voice", "check": check, "value": value, "limit": limit, "ok": bool(ok)}


def _stored(bundle: Path) -> VoicePrompt:
    with np.load(bundle / VOICE_NPZ) as z:
        return VoicePrompt(z["prompt_tokens"], z["prompt_mel"], z["spk_embedding"])


def voice_rows(bundle: Path, manifest: dict, bad: set[str], assets: Path | None) -> list[dict]:
    part = next((p for p in manifest.get("parts", []) if p.get("role") == "token2wav-voice"), None)
    speaks = any(p.get("role") == "token2wav_encoder" for p in manifest.get("parts", []))
    if part is None:
        if speaks:
            print("The bundle has token2wav graphs but no voice prompt; rebuild it with this venus-export build.")
        return [_row("present", "missing", "present", False)] if speaks else []
    if set(part["files"]) & bad:
        return [_row("prompt", "not run", "files intact", False)]
    stored = _stored(bundle)
    facts = part.get("voice") or {}
    same = np.array_equal(stored.tokens, np.asarray(facts.get("prompt_tokens", []), np.int64)) and \
        np.allclose(stored.spk, np.asarray(facts.get("spk_embedding", []), np.float32), atol=1e-6)
    problem = check_prompt(stored, 1 << 30, stored.spk.size)
    rows = [_row("file vs manifest", "same" if same else "differs", "same", same),
            _row("shapes", problem or f"{len(stored.tokens)} codes, mel {list(stored.mel.shape)}", "consistent",
                 problem is None)]
    if not same:
        print(f"{VOICE_NPZ} does not hold the prompt codes and speaker vector its manifest entry records.")
    if assets is not None:
        audio, sr = read_reference(bundle / VOICE_WAV)
        again = make_prompt(audio, sr, assets)
        codes = np.array_equal(again.tokens, stored.tokens)
        err = max(float(np.abs(again.spk - stored.spk).max()), float(np.abs(again.mel - stored.mel).max())) \
            if codes else float("inf")
        rows += [_row("codes remade", "identical" if codes else "differ", "identical", codes),
                 _row("speaker+mel remade", f"{err:.1e}", f"<= {TOLERANCE:g}", err <= TOLERANCE)]
        if not codes or err > TOLERANCE:
            print(f"The voice prompt remade from {VOICE_WAV} with the checkpoint's graphs differs from the stored one.")
    return rows
