"""Bundle checks before anything loads: one clear sentence for every mismatch, TensorRT fallback noted."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from edge.frontend.factory import build_frontend
from edge.bundle import engines
from edge.bundle.reader import BundleError, open_bundle
from edge.backends.onnx import choose_providers
from edge.backends.sampling import Sampler
from edge.backends.sampling import Sampling
from edge.bundle.settings import VenusSettings
from repo_paths import SUPPORT


@pytest.fixture
def copy(audio_bundle, tmp_path):
    dst = tmp_path / "b"
    shutil.copytree(audio_bundle, dst)
    return dst


def edit_manifest(root, fn):
    m = json.loads((root / "manifest.json").read_text())
    fn(m)
    (root / "manifest.json").write_text(json.dumps(m))


def test_a_good_bundle_opens(audio_bundle):
    b = open_bundle(audio_bundle)
    assert b.variant == "audio" and b.llm_precision == "F16" and "audio" in b.graphs and "vision" not in b.graphs
    assert b.notes == []


def test_damaged_or_missing_files_are_refused(copy):
    gguf = next((copy / "llm").glob("*.gguf"))
    data = bytearray(gguf.read_bytes())
    data[-1] ^= 1
    gguf.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="does not match its sha256"):
        open_bundle(copy)
    gguf.write_bytes(bytes(data[:-1]))
    with pytest.raises(BundleError, match="incomplete"):
        open_bundle(copy)
    gguf.unlink()
    with pytest.raises(BundleError, match="is missing"):
        open_bundle(copy)


def test_variant_precision_device_and_format_are_checked(copy, tmp_path):
    with pytest.raises(BundleError, match="no LLM GGUF in Q4_K_M"):
        open_bundle(copy, precision="Q4_K_M")
    with pytest.raises(BundleError, match="no audio graph in int8"):
        open_bundle(copy, encoder_precision="int8")
    edit_manifest(copy, lambda m: m["target"].update(device="orin-nano-8"))
    with pytest.raises(BundleError, match="fitted to device orin-nano-8"):
        open_bundle(copy, device="rtx-4090")
    edit_manifest(copy, lambda m: m.update(variant="omni"))
    with pytest.raises(BundleError, match="no vision graph"):
        open_bundle(copy)
    edit_manifest(copy, lambda m: m.update(format_version=99))
    with pytest.raises(BundleError, match="not a venus-bundle manifest"):
        open_bundle(copy)
    with pytest.raises(BundleError, match="no manifest.json"):
        open_bundle(tmp_path)


def test_an_engine_for_another_gpu_falls_back_to_onnx_in_one_sentence(copy, tmp_path, monkeypatch):
    """Engines from the real builder (venus-export engines, with a stand-in trtexec on this GPU-less machine)."""
    import importlib.util
    import os

    from export.trt.builder import build_engines

    spec = importlib.util.spec_from_file_location(
        "trtexec_stand_in", SUPPORT / "trtexec_stand_in.py")
    stand_in = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stand_in)
    exe = stand_in.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    assert build_engines(copy, key="trt10.3.0-orin-nano-sm87").current
    onnx = open_bundle(copy).graphs["audio"]
    eng = copy / "engines" / "trt10.3.0-orin-nano-sm87" / onnx.relative_to(copy).with_suffix(".fp16.engine")
    monkeypatch.setattr(engines, "_local_key", lambda: "trt10.8.0-rtx-4090-sm89")
    b = open_bundle(copy)
    assert b.engines == {}
    [note] = b.notes
    assert note.startswith("The bundle's TensorRT engines were built for trt10.3.0-orin-nano-sm87, not this device")
    assert note.count(". ") == 0 and "run from ONNX" in note
    monkeypatch.setattr(engines, "_local_key", lambda: None)
    assert "cannot run here" in open_bundle(copy).notes[0]
    monkeypatch.setattr(engines, "_local_key", lambda: "trt10.3.0-orin-nano-sm87")
    assert open_bundle(copy).engines["audio"] == eng


def test_providers_prefer_tensorrt_then_cuda_then_cpu():
    have = ["CPUExecutionProvider", "CUDAExecutionProvider", "TensorrtExecutionProvider"]
    assert choose_providers("auto", have) == ["TensorrtExecutionProvider", "CUDAExecutionProvider",
                                              "CPUExecutionProvider"]
    assert choose_providers("auto", ["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert choose_providers("cpu", have) == ["CPUExecutionProvider"]


def test_settings_are_checked_and_the_factory_reports_bad_bundles(tmp_path):
    with pytest.raises(ValueError, match="unknown Venus setting"):
        VenusSettings.from_dict({"temprature": 1})
    with pytest.raises(ValueError, match="KV marks"):
        VenusSettings.from_dict({"kv_low": 9000})
    with pytest.raises(BundleError, match="is not a directory"):
        build_frontend(f"bundle:{tmp_path / 'nope'}", {})
    with pytest.raises(BundleError, match="needs its folder"):
        build_frontend("bundle:", {})


def test_sampling_rules():
    logits = np.array([0.0, 5.0, 4.9, 1.0, -2.0], np.float32)
    greedy = Sampler(Sampling(temperature=0.0, repetition_penalty=1.0), listen_id=3, turn_eos_id=4)
    assert greedy.sample(logits, np.array([], np.int64)) == 1
    assert greedy.sample(logits, np.array([1], np.int64)) == 2  # a masked token is never chosen
    assert greedy.sample(logits, np.array([1], np.int64), {1: 1e4}) == 2  # not even when forced
    assert greedy.sample(logits, np.array([], np.int64), {4: 1e4}) == 4
    scaled = Sampler(Sampling(temperature=0.0, listen_scale=1e3, repetition_penalty=1.0), 3, 4)
    assert scaled.sample(logits, np.array([], np.int64)) == 3  # listen scale multiplies its logit
    ending = np.array([0.0, 5.0, 4.9, 1.0, 3.0], np.float32)
    short = Sampler(Sampling(temperature=0.0, length_penalty=0.5, repetition_penalty=1.0), 3, 4)
    assert short.sample(ending, np.array([], np.int64)) == 4  # below 1 the turn-end logit (3 -> 6) rises
    rep = Sampler(Sampling(temperature=0.0, repetition_penalty=2.0), 3, 4)
    rep.remember(1)
    assert rep.sample(logits, np.array([], np.int64)) == 2  # the recent token is penalised
    top1 = Sampler(Sampling(temperature=0.7, top_k=1), 3, 4)
    assert {top1.sample(logits, np.array([], np.int64)) for _ in range(20)} == {1}
    nucleus = Sampler(Sampling(temperature=0.7, top_k=5, top_p=0.5, repetition_penalty=1.0), 3, 4)
    assert {nucleus.sample(logits, np.array([], np.int64)) for _ in range(50)} <= {1, 2}
