"""The exporter writes the voice prompt with the checkpoint's own graphs; the runtime speaks with it."""
from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
import soundfile as sf

from edge.bundle.settings import VenusSettings
from edge.speech.venus.voice import VenusVoice
from export.verify import verify
from export.voice_prompt import make_prompt, read_reference

from bundle_support import ROOT, checkpoint, run_export
from venus_support import BASE, speechy


def voice_part(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    return manifest, next(p for p in manifest["parts"] if p["role"] == "token2wav-voice")


def stored(bundle) -> dict:
    with np.load(bundle / "voice" / "voice.npz") as z:
        return {k: z[k] for k in z.files}


def test_the_default_voice_is_made_from_the_projects_recording_with_the_checkpoints_graphs(
        exported_audio_bundle, bundle_cache):
    manifest, part = voice_part(exported_audio_bundle)
    facts = part["voice"]
    assert part["files"] == ["voice/voice.npz", "voice/reference.wav"]
    assert facts["default"] and facts["reference"] == "two_plus_two.wav"
    ref, rate = sf.read(str(ROOT / "edge" / "assets" / "two_plus_two.wav"), dtype="float32")
    kept, kept_rate = sf.read(str(exported_audio_bundle / "voice" / "reference.wav"), dtype="float32")
    assert kept_rate == rate and np.abs(kept - ref).max() < 1e-4  # the recording, as 16-bit
    arrays = stored(exported_audio_bundle)
    assert arrays["prompt_tokens"].tolist() == facts["prompt_tokens"]
    np.testing.assert_allclose(arrays["spk_embedding"], facts["spk_embedding"], rtol=1e-6)
    assert arrays["prompt_mel"].shape == (2 * len(facts["prompt_tokens"]), 80)
    assert len(facts["prompt_tokens"]) == pytest.approx(25 * len(ref) / rate, abs=2)  # 25 codes a second
    # Made by the checkpoint's speech tokenizer and speaker graph, which the bundle does not carry.
    assets = checkpoint(bundle_cache, "audio") / "assets" / "token2wav"
    again = make_prompt(*read_reference(exported_audio_bundle / "voice" / "reference.wav"), assets)
    np.testing.assert_array_equal(again.tokens, arrays["prompt_tokens"])
    np.testing.assert_allclose(again.spk, arrays["spk_embedding"], atol=1e-5)
    assert not any(f.endswith(("campplus.onnx", "speech_tokenizer_v2_25hz.onnx")) for f in manifest["files"])
    # The TTS ids are in the manifest too.
    assert set(manifest["runtime"]["tts"]) >= {"text_eos_id", "audio_bos_id", "normalize_projected_hidden"}


def test_the_voice_speaks_with_the_exported_prompt(exported_audio_bundle):
    v = VenusVoice(exported_audio_bundle, VenusSettings.from_dict(BASE))
    try:
        arrays = stored(exported_audio_bundle)
        assert v.t2w.stream.prompt_frames == len(arrays["prompt_mel"])
        np.testing.assert_array_equal(v.t2w.stream.spk[0], arrays["spk_embedding"])
    finally:
        v.close()


def test_voice_flag_makes_another_voice_and_verify_checks_it(exported_audio_bundle, bundle_cache, tmp_path):
    wav = tmp_path / "mine.wav"
    sf.write(str(wav), speechy(3.0, seed=9), 16000, subtype="PCM_16")
    other = shutil.copytree(exported_audio_bundle, tmp_path / "b")
    ckpt = checkpoint(bundle_cache, "audio")
    run_export("build", str(ckpt), "-o", str(other), "--types", "F16", "--encoders", "fp32", "--no-progress",
               "--voice", str(wav))
    _, part = voice_part(other)
    assert part["voice"]["reference"] == "mine.wav" and not part["voice"]["default"]
    assert part["voice"]["prompt_tokens"] != voice_part(exported_audio_bundle)[1]["voice"]["prompt_tokens"]
    codes = np.arange(200, 260)
    voices = [VenusVoice(b, VenusSettings.from_dict(BASE)) for b in (exported_audio_bundle, other)]
    try:
        a, b = (np.concatenate(list(v.t2w.stream_codes(codes))) for v in voices)
        assert len(a) == len(b) and np.abs(a - b).mean() > 0.1 * np.abs(a).mean()  # the same codes, another voice
    finally:
        for v in voices:
            v.close()
    rows = {(r["part"], r["check"]): r for r in verify(other, ckpt)}
    assert rows[("token2wav-voice", "codes remade")]["ok"] and rows[("token2wav-voice", "file vs manifest")]["ok"]
    assert rows[("runtime", "vs checkpoint")]["ok"]
    # A voice file that no longer holds what the manifest records is caught, even with its hash updated.
    arrays = stored(other)
    arrays["prompt_tokens"][0] = (arrays["prompt_tokens"][0] + 1) % 6561
    np.savez(other / "voice" / "voice.npz", **arrays)
    manifest = json.loads((other / "manifest.json").read_text())
    data = (other / "voice" / "voice.npz").read_bytes()
    manifest["files"]["voice/voice.npz"].update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    (other / "manifest.json").write_text(json.dumps(manifest))
    bad = [r for r in verify(other) if not r["ok"]]
    assert [(r["part"], r["check"]) for r in bad] == [("token2wav-voice", "file vs manifest")]
