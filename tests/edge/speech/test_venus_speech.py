"""The Venus voice: hidden states -> projected condition -> TTS codes (llama.cpp) -> token2wav (onnxruntime)."""
from __future__ import annotations

import numpy as np
import pytest

from edge.bundle.settings import VenusSettings
from edge.speech.venus.token2wav import windows
from edge.speech.venus.voice import VenusVoice

from venus_support import BASE


@pytest.fixture(scope="module")
def voice(omni_bundle):
    v = VenusVoice(omni_bundle, VenusSettings.from_dict({**BASE, "tts_chunk_draws": 26}))
    yield v
    v.close()


def test_projection_is_l2_normalised_and_added_to_the_text_embedding(voice):
    rng = np.random.default_rng(1)
    hidden = rng.standard_normal((3, voice.tts.llm_dim)).astype(np.float32) * 5
    proj = voice.tts.project(hidden)
    np.testing.assert_allclose(np.linalg.norm(proj, axis=1), 1.0, rtol=1e-5)
    cond = voice.tts.condition([5, 6, 7], hidden)
    np.testing.assert_allclose(cond[:3] - voice.tts.emb_text[[5, 6, 7]], proj, atol=1e-5)
    # Then the audio-begin text embedding alone (the tiny vocabulary's <|tts_bos|>, resolved by the exporter and
    # read from the manifest): the reference's duplex condition has no text-end row.
    eos, bos = (voice.vocab().tokenize(t, special=True)[0] for t in ("<|tts_eos|>", "<|tts_bos|>"))
    assert (voice.bundle.runtime.tts.text_eos_id, voice.bundle.runtime.tts.audio_bos_id) == (eos, bos)
    np.testing.assert_array_equal(cond[3:], voice.tts.emb_text[[bos]])
    assert len(cond) == 4
    assert voice.tts.condition([], None).shape[0] == 1  # a wordless chunk: audio-begin alone
    with pytest.raises(ValueError, match="hidden states must be"):
        voice.tts.condition([5, 6], hidden)


def test_hidden_states_change_the_codes_and_audio_is_24k(voice):
    rng = np.random.default_rng(2)
    ids = [40, 50, 60, 70, 80]
    a = rng.standard_normal((5, voice.tts.llm_dim)).astype(np.float32)
    b = rng.standard_normal((5, voice.tts.llm_dim)).astype(np.float32)
    codes_a = voice.tts.codes(ids, a, 30)
    assert np.array_equal(codes_a, voice.tts.codes(ids, a, 30))  # seeded sampling: reproducible
    assert not np.array_equal(codes_a, voice.tts.codes(ids, b, 30))
    assert len(codes_a) <= 29 and (len(codes_a) == 0 or codes_a.max() < voice.tts.n_speech)
    pieces = list(voice.synthesize_states("words", ids, a))
    assert voice.sample_rate == 24000 and all(p.dtype == np.float32 for p in pieces)
    total = sum(len(p) for p in pieces)
    codes = voice.codes_total
    assert total == pytest.approx(codes * 960, abs=960 * 4)  # 25 codes a second at 24 kHz
    assert 1e-4 < float(np.sqrt(np.mean(np.concatenate(pieces) ** 2))) < 1.0


def test_streaming_windows_follow_the_contract():
    codes = np.arange(80)
    w = windows(codes)
    assert [len(c) for c, _ in w] == [28, 28, 28, 5] and [last for _, last in w] == [False, False, False, True]
    assert [int(c[0]) for c, _ in w] == [0, 25, 50, 75]
    assert windows(np.arange(20))[0][1] is True


def test_text_without_hidden_states_still_speaks(voice):
    pieces = list(voice.synthesize("hello there"))
    assert pieces and sum(len(p) for p in pieces) > 0


def test_a_bundle_without_a_voice_prompt_is_refused(omni_bundle, tmp_path):
    import json
    import shutil

    from edge.bundle.reader import BundleError

    copy = shutil.copytree(omni_bundle, tmp_path / "b")
    manifest = json.loads((copy / "manifest.json").read_text())  # as an exporter that wrote no voice left it
    manifest["parts"] = [p for p in manifest["parts"] if p["role"] != "token2wav-voice"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="no voice prompt .*rebuild it"):
        VenusVoice(copy, VenusSettings.from_dict(BASE))
