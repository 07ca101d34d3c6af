"""A bundle carries the checkpoint settings the device needs: it runs with them after the checkpoint is gone."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from edge.bundle.reader import BundleError, open_bundle
from edge.bundle.runtime import VisionFacts
from edge.bundle.settings import VenusSettings
from edge.frontend.venus.frontend import VenusFrontend
from edge.speech.venus.voice import VenusVoice

from bundle_support import checkpoint, export_bundle
from venus_support import BASE, speechy


@pytest.fixture(scope="module")
def moved_bundle(bundle_cache, tmp_path_factory):
    """An Audio bundle from a checkpoint with non-default settings, built, then the checkpoint deleted."""
    work = tmp_path_factory.mktemp("moved")
    ckpt = shutil.copytree(checkpoint(bundle_cache, "audio"), work / "ckpt")
    config = json.loads((ckpt / "config.json").read_text())
    config["audio_chunk_length"] = 0.5  # encoder blocks of half a second
    config["tts_config"].update(normalize_projected_hidden=False, text_eos_token_id=5, audio_bos_token_id=6)
    (ckpt / "config.json").write_text(json.dumps(config))
    _, bundle = export_bundle(work, "audio", "bundle", ckpt=ckpt)
    shutil.rmtree(ckpt)
    return bundle


def test_the_bundle_runs_with_its_checkpoints_settings_after_the_checkpoint_is_gone(moved_bundle):
    manifest = json.loads((moved_bundle / "manifest.json").read_text())
    assert not (moved_bundle.parent / "ckpt").exists() and manifest["source"]["path"].endswith("ckpt")
    settings = VenusSettings.from_dict({**BASE, "forced": {"*": ["<|listen|>"]}})
    voice = VenusVoice(moved_bundle, settings)
    try:
        assert voice.tts.normalize is False  # not the runtime's guess
        np.testing.assert_array_equal(voice.tts.text_end[0], voice.tts.emb_text[5])
        np.testing.assert_array_equal(voice.tts.audio_begin[0], voice.tts.emb_text[6])
        hidden = np.random.default_rng(0).standard_normal((2, voice.tts.llm_dim)).astype(np.float32) * 5
        assert np.linalg.norm(voice.tts.project(hidden), axis=1).max() > 1.5  # projected states left as they are
    finally:
        voice.close()
    frontend = VenusFrontend(moved_bundle, settings)
    try:
        assert frontend.audio.block_samples == 8000
        assert len(frontend.audio.encode(speechy(0.5))) == 5
        assert frontend.audio.past.shape[4] == 25  # half a second is a whole block: committed to the cache
    finally:
        frontend.close()


def test_slicing_comes_from_the_manifest(omni_bundle):
    b = open_bundle(omni_bundle)
    assert b.runtime.vision == VisionFacts(scale_resolution=448, patch_size=14, max_slices=9, max_side=980)
    # max_slices None: the checkpoint's own limit, from the manifest (the default streams one slice, as the reference)
    frontend = VenusFrontend(omni_bundle, VenusSettings.from_dict({**BASE, "max_slices": None}))
    try:
        v = frontend.vision
        assert (v.scale, v.patch, v.max_slices, v.max_side) == (448, 14, 9, 980)
    finally:
        frontend.close()


def test_a_bundle_without_runtime_settings_is_refused_in_one_sentence(audio_bundle, tmp_path):
    copy = shutil.copytree(audio_bundle, tmp_path / "b")
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest["runtime"]  # what an older exporter wrote
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError) as err:
        open_bundle(copy)
    text = str(err.value)
    assert "no runtime section" in text and "rebuild it with this venus-export build" in text
    assert text.count(". ") == 0 and "\n" not in text
