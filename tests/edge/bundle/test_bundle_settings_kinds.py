"""A bundle's settings (venus.json beside it, the session's `venus` mapping, --threads, --kv-type, --context) are
read through one typed path: a value of the wrong kind is one sentence that names the setting and where it is,
said before any node starts, and the merge order of valid ones is as before."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from edge.bundle.settings import VenusSettings
from edge.session import SessionConfig, SettingsError, make_supervisor, nodes_for

SITE = [  # venus.json beside the bundle
    ({"n_ctx": "big"}, "the Venus setting n_ctx is 'big'; it must be a whole number."),
    ({"flash_attn": "yes"}, "the Venus setting flash_attn is 'yes'; it must be true or false."),
    ({"sampling": {"temperature": "hot"}}, "the Venus setting sampling temperature is 'hot'; it must be a number."),
    ({"forced": {"x": ["<|speak|>"]}}, "the Venus setting forced has the key 'x'; it must be a chunk index or \"*\"."),
]
SESSION = [  # the session's own `venus` mapping
    ({"threads": "two"}, "the session's Venus setting threads is 'two'; it must be a whole number."),
    ({"n_gpu_layers": 1.5}, "the session's Venus setting n_gpu_layers is 1.5; it must be a whole number."),
    ("fast", "the session's venus is 'fast'; it must be a mapping."),
]


def bundle_session(root, venus=None, **fields) -> SessionConfig:
    return SessionConfig(mic="in.wav", speaker="null", frontend=f"bundle:{root}", voice=f"bundle:{root}",
                         extra={} if venus is None else {"venus": venus}, **fields)


@pytest.fixture
def site_bundle(tmp_path, exported_audio_bundle):
    """A copy of the exporter's Audio bundle, where a site may put its venus.json."""
    return shutil.copytree(exported_audio_bundle, tmp_path / "bundle")


@pytest.mark.parametrize("site,sentence", SITE, ids=[json.dumps(s) for s, _ in SITE])
def test_a_wrong_kind_in_venus_json_is_one_sentence_naming_the_file(site_bundle, site, sentence):
    (site_bundle / "venus.json").write_text(json.dumps(site))
    cfg = bundle_session(site_bundle)
    with pytest.raises(SettingsError) as err:
        make_supervisor(cfg, nodes_for(cfg))
    assert str(err.value) == f"{site_bundle / 'venus.json'}: {sentence}"


@pytest.mark.parametrize("venus,sentence", SESSION, ids=[json.dumps(v) for v, _ in SESSION])
def test_a_wrong_kind_in_the_sessions_venus_settings_is_one_sentence(exported_audio_bundle, venus, sentence):
    cfg = bundle_session(exported_audio_bundle, venus)
    with pytest.raises(SettingsError) as err:
        make_supervisor(cfg, nodes_for(cfg))
    assert str(err.value) == sentence


def test_the_command_line_says_it_before_any_node_starts(tmp_path, site_bundle):
    bundle = site_bundle
    (bundle / "venus.json").write_text(json.dumps({"n_ctx": "big"}))
    sf.write(tmp_path / "in.wav", np.zeros(16000, np.float32), 16000)
    r = subprocess.run([sys.executable, "-m", "edge.cli", "--bundle", str(bundle), "--mic", str(tmp_path / "in.wav"),
                        "--speaker", "null", "--journal", str(tmp_path / "s.journal")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == (f"venus-edge: {bundle / 'venus.json'}: the Venus setting n_ctx is 'big'; it must be a "
                                f"whole number.")


def test_a_benchmark_giving_threads_of_the_wrong_kind_gets_the_sentence(tmp_path):
    with pytest.raises(SettingsError, match=r"^the session's threads is 'two'; it must be a whole number\.$"):
        VenusSettings.load(tmp_path, {"threads": "two", "device": "cpu"})


def test_valid_settings_merge_as_before(tmp_path):
    (tmp_path / "venus.json").write_text(json.dumps({"threads": 2, "n_gpu_layers": 0, "max_slices": None,
                                                     "forced": {"*": ["<|listen|>"], "3": ["<|speak|>"]},
                                                     "tts_sampling": {"temperature": 0}}))
    flat = bundle_session(tmp_path, {"flash_attn": True, "sampling": {"temperature": 1}}, threads=3, context=2048,
                          kv_type="q8_0").as_dict()
    s = VenusSettings.load(tmp_path, flat)
    assert (s.threads, s.n_ctx, s.kv_type, s.kv_high, s.kv_low) == (3, 2048, "q8_0", 2000, 1500)  # the flags win
    assert (s.n_gpu_layers, s.max_slices, s.flash_attn) == (0, None, True)  # null is a value in venus.json
    assert s.forced == {-1: ["<|listen|>"], 3: ["<|speak|>"]}
    assert (s.sampling.temperature, s.sampling.top_k) == (1.0, 20)  # over the defaults
    assert (s.tts_sampling.temperature, s.tts_sampling.repetition_window) == (0.0, 16)  # over the TTS defaults
    s = VenusSettings.load(tmp_path, bundle_session(tmp_path, {"threads": 4, "kv_high": 1800}, threads=3,
                                                    context=2048).as_dict())
    assert (s.threads, s.kv_high, s.kv_low) == (4, 1800, 1500)  # the session's venus mapping wins over --threads
