"""The one engine builder (venus-export engines) over a bundle the real exporter wrote.

CPU: a stand-in trtexec (trtexec_stand_in.py) records what the builder asks for.
GPU (marker gpu): the same builder builds real engines, and the runtime's engine
runner (no torch) must match onnxruntime on them.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from edge.bundle import engines as runtime_engines
from edge.bundle.manifest import sha256_file
from edge.bundle.reader import open_bundle
from export.build import BuildOptions, build
from export.cli import main as export_main
from export.trt.builder import build_engines
from export.trt.shapes import DIMENSIONS, uses_float64

import trtexec_stand_in  # noqa: E402

KEY = "trt10.3.0-orin-nano-sm87"


@pytest.fixture(scope="module")
def exported(tmp_path_factory, tiny_omni) -> Path:
    """Omni bundle with FP32 and INT8 graphs (vision, audio: QDQ; token2wav: dynamic INT8) and a float64 vocoder."""
    out = tmp_path_factory.mktemp("trt-bundle") / "omni"
    build(tiny_omni, out, BuildOptions(types=["F16"], encoders=["fp32", "int8"], onnx=True, progress=False,
                                       threads=1))
    return out


@pytest.fixture
def bundle(exported, tmp_path) -> Path:
    return Path(shutil.copytree(exported, tmp_path / "bundle"))


@pytest.fixture
def trtexec(tmp_path, monkeypatch) -> Path:
    exe = trtexec_stand_in.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VENUS_TRT_VERSION", KEY.split("-")[0][3:])
    monkeypatch.setenv("VENUS_GPU_ID", KEY.split("-", 1)[1])
    return exe


def onnx_parts(bundle: Path) -> dict[str, dict]:
    manifest = json.loads((bundle / "manifest.json").read_text())
    return {f: p for p in manifest["parts"] if p["kind"] == "onnx" for f in p["files"] if f.endswith(".onnx")}


def call_for(exe: Path, rel: str) -> dict[str, str]:
    [line] = [c for c in trtexec_stand_in.calls(exe) if f"/{rel} " in c or f"/{Path(rel).name} " in c]
    return dict(a.split("=", 1) if "=" in a else (a, "") for a in line.split())


def test_every_graph_of_the_manifest_is_built_or_skipped_with_a_reason(bundle, trtexec, capsys) -> None:
    assert export_main(["engines", str(bundle)]) == 0
    out = capsys.readouterr().out.splitlines()
    parts = onnx_parts(bundle)
    for rel, part in parts.items():  # one report line per ONNX graph of the manifest
        [line] = [o for o in out if f" {rel}" in o]
        dynamic = part["role"].startswith("token2wav") and part["precision"] == "int8"
        assert line.startswith("skipped" if dynamic else "built"), line
        if dynamic:
            assert "dynamic INT8" in line and "onnxruntime runs it" in line
    key_dir = bundle / "engines" / KEY
    # precision follows the manifest: a QDQ graph becomes an INT8 engine, an FP32 one FP16
    audio8 = call_for(trtexec, "onnx/audio.int8.onnx")
    assert "--int8" in audio8 and audio8["--saveEngine"] == str(key_dir / "onnx" / "audio.int8.int8.engine")
    audio32 = call_for(trtexec, "onnx/audio.fp32.onnx")
    assert "--fp16" in audio32 and "--int8" not in audio32
    # shape ranges from the manifest's recorded inputs and the runtime's table
    mel = next(i for i in parts["onnx/audio.fp32.onnx"]["shapes"]["inputs"] if i["name"] == "mel")
    assert mel["shape"] == [1, 80, "frames"]
    lo, opt, hi = DIMENSIONS["audio"]["frames"]
    assert f"mel:1x80x{lo}" in audio32["--minShapes"] and f"mel:1x80x{opt}" in audio32["--optShapes"]
    assert f"mel:1x80x{hi}" in audio32["--maxShapes"]
    pixels = call_for(trtexec, "onnx/vision.fp32.onnx")["--maxShapes"]
    assert f"x{DIMENSIONS['vision']['height'][2]}x{DIMENSIONS['vision']['width'][2]}" in pixels
    # the vocoder reaches TensorRT as a float32 copy; the bundle's own graph keeps float64
    vocoder = bundle / "onnx" / "token2wav_vocoder.fp32.onnx"
    assert uses_float64(vocoder) and not uses_float64(trtexec.parent / "seen" / vocoder.name)
    assert any("token2wav_vocoder.fp32.onnx" in o and "float64 demoted" in o for o in out)
    # stamps, and the link the runtime follows
    stamp = json.loads((key_dir / "onnx" / "audio.fp32.fp16.json").read_text())
    assert stamp["onnx_sha256"] == sha256_file(bundle / "onnx" / "audio.fp32.onnx") and stamp["key"] == KEY
    assert os.readlink(bundle / "engines" / "current") == KEY and out[-1] == f"engines/current -> {KEY}"


def test_the_runtime_takes_the_built_engines_on_the_device_they_were_built_for(bundle, trtexec, monkeypatch) -> None:
    assert build_engines(bundle).current
    monkeypatch.setattr(runtime_engines, "_local_key", lambda: KEY)
    b = open_bundle(bundle)
    assert b.engines["audio"] == bundle / "engines" / KEY / "onnx" / "audio.fp32.fp16.engine" and b.notes == []
    monkeypatch.setattr(runtime_engines, "_local_key", lambda: "trt10.8.0-rtx-4090-sm89")
    b = open_bundle(bundle)
    assert b.engines == {} and b.notes == [f"The bundle's TensorRT engines were built for {KEY}, not this device "
                                           "(trt10.8.0-rtx-4090-sm89), so its graphs run from ONNX; rebuild them "
                                           "with venus-export engines BUNDLE."]


def test_unchanged_graphs_are_not_rebuilt_and_a_new_key_replaces_the_old(bundle, trtexec) -> None:
    first = build_engines(bundle)
    n = len(trtexec_stand_in.calls(trtexec))
    again = build_engines(bundle)
    assert len(trtexec_stand_in.calls(trtexec)) == n
    assert [line.split()[0] for line in again.lines if not line.startswith("skipped")] == ["up"] * n
    newer = build_engines(bundle, key="trt10.7.0-orin-nano-sm87")  # a JetPack upgrade
    assert newer.current and len(trtexec_stand_in.calls(trtexec)) == 2 * n
    assert f"removed     engines/{KEY} (built for another TensorRT or GPU)" in newer.lines
    assert sorted(p.name for p in (bundle / "engines").iterdir()) == ["current", "trt10.7.0-orin-nano-sm87"]
    assert first.key == KEY


def test_a_failed_graph_does_not_stop_the_rest_and_sets_no_current_link(bundle, trtexec, monkeypatch,
                                                                         capsys) -> None:
    assert build_engines(bundle).current  # a complete set; then one engine is lost and fails to build again
    (bundle / "engines" / KEY / "onnx" / "vision.fp32.fp16.engine").unlink()
    monkeypatch.setenv("TRTEXEC_FAIL", "vision.fp32")
    assert export_main(["engines", str(bundle)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    [failed] = [line for line in lines if line.startswith("FAILED")]
    assert failed.startswith("FAILED      onnx/vision.fp32.onnx (fp16): ") and "could not infer the shape" in failed
    # every other graph was still looked at (and is up to date)
    skipped = sum(line.startswith("skipped") for line in lines)
    assert sum(line.startswith("up to date") for line in lines) == len(onnx_parts(bundle)) - skipped - 1
    assert "1 graph(s) failed, so engines/current is not set" in captured.err
    assert not (bundle / "engines" / "current").exists()
    monkeypatch.setattr(runtime_engines, "_local_key", lambda: KEY)
    b = open_bundle(bundle)
    assert b.engines == {} and "incomplete" in b.notes[0]


def test_dry_run_and_missing_tensorrt(bundle, trtexec, tmp_path, monkeypatch, capsys) -> None:
    assert export_main(["engines", str(bundle), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    skipped = sum(line.startswith("skipped") for line in lines)
    runs = [line for line in lines if line.startswith("would run   trtexec --onnx=")]
    assert len(runs) == len(onnx_parts(bundle)) - skipped > 0
    assert not (bundle / "engines").exists() and not trtexec_stand_in.calls(trtexec)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no trtexec; this machine has no TensorRT module
    if _has_tensorrt():
        pytest.skip("TensorRT's Python module is installed here")
    assert export_main(["engines", str(bundle)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: TensorRT is not installed here") and "\n" not in err


def test_key_and_dry_run_without_tensorrt(bundle, tmp_path, monkeypatch, capsys) -> None:
    """A workstation without TensorRT: --print-key and --dry-run still answer, naming what stands in."""
    if _has_tensorrt():
        pytest.skip("TensorRT's Python module is installed here")
    monkeypatch.delenv("VENUS_TRT_VERSION", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no trtexec, no dpkg-query, no nvidia-smi
    assert export_main(["engines", "--print-key"]) == 0
    out = capsys.readouterr()
    assert out.out.strip().startswith("trt<tensorrt>-") and "--tensorrt VERSION" in out.err
    # the device's own parts, given by hand, make the real key
    assert export_main(["engines", "--print-key", "--tensorrt", "10.3.0", "--gpu", "orin-nano-sm87"]) == 0
    assert capsys.readouterr().out.strip() == KEY
    assert export_main(["engines", str(bundle), "--dry-run", "--tensorrt", "10.3.0", "--gpu", "orin-nano-sm87"]) == 0
    runs = [line for line in capsys.readouterr().out.splitlines() if line.startswith("would run   trtexec ")]
    assert runs and all(f"--saveEngine={bundle}/engines/{KEY}/" in line for line in runs)
    assert not (bundle / "engines").exists()
    assert export_main(["engines", str(bundle), "--dry-run"]) == 0
    assert "would run   trtexec " in capsys.readouterr().out
    # a real build takes this device's own parts only
    assert export_main(["engines", str(bundle), "--tensorrt", "10.3.0"]) == 2
    assert "only go with --print-key or --dry-run" in capsys.readouterr().err


@pytest.mark.parametrize("make, words", [
    (lambda b: b / "missing", "is not a directory"),
    (lambda b: b.parent, "has no manifest.json"),
])
def test_bad_bundles_are_one_sentence(bundle, trtexec, make, words, capsys) -> None:
    assert export_main(["engines", str(make(bundle))]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err


def _has_tensorrt() -> bool:
    try:
        import tensorrt  # noqa: F401
    except ImportError:
        return False
    return True


def _gpu_reason() -> str | None:
    if not _has_tensorrt():
        return "TensorRT's Python module is not installed"
    try:
        runtime_engines.device_key()
    except RuntimeError as exc:
        return str(exc)
    return None


@pytest.mark.gpu
@pytest.mark.skipif(_gpu_reason() is not None, reason=f"needs TensorRT and a GPU ({_gpu_reason()})")
def test_engines_built_by_the_builder_run_like_onnx(exported, tmp_path) -> None:
    """Real engines through the same builder (trtexec, or TensorRT's Python API), run by the torch-free runner."""
    from edge.backends.onnx import OnnxGraph
    from edge.backends.trt_engine import TrtEngine

    bundle = Path(shutil.copytree(exported, tmp_path / "bundle"))
    report = build_engines(bundle)
    assert report.current, report.lines
    rng = np.random.default_rng(0)
    model = onnx.load(str(bundle / "onnx" / "audio.fp32.onnx"), load_external_data=False)
    past = [d.dim_value or 50 for d in model.graph.input[1].type.tensor_type.shape.dim]
    feed = {"mel": rng.uniform(-0.8, 1.0, (1, 80, 100)).astype(np.float32),
            "past_kv": rng.standard_normal(past).astype(np.float32)}
    expected = OnnxGraph(bundle / "onnx" / "audio.fp32.onnx", "cpu")(feed)[0]
    got = TrtEngine(bundle / "engines" / "current" / "onnx" / "audio.fp32.fp16.engine")(feed)[0]
    rel = np.abs(got - expected).mean() / np.abs(expected).mean()
    assert rel < 2e-2, rel
