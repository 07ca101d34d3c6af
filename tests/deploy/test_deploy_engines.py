"""engines.py: build, skip, rebuild on a changed ONNX or a new TensorRT/GPU key, with a stand-in trtexec."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from deploy_support import load_jetson, JETSON, run

engines = load_jetson("engines")

FAKE_TRTEXEC = """#!/usr/bin/env bash
# records its arguments, writes the engine file like trtexec --saveEngine does
echo "$*" >> "$(dirname "$0")/calls"
[ -n "${FAIL_TRTEXEC:-}" ] && { echo "[E] Error[4]: network has dynamic inputs but no profile"; exit 1; }
for a in "$@"; do case "$a" in --saveEngine=*) echo engine > "${a#--saveEngine=}" ;; esac; done
"""


@pytest.fixture
def trtexec(tmp_path: Path) -> Path:
    exe = tmp_path / "bin" / "trtexec"
    exe.parent.mkdir()
    exe.write_text(FAKE_TRTEXEC)
    exe.chmod(0o755)
    return exe


def refresh(bundle: Path, trtexec: Path, key: str = "trt10.3.0-orin-nano-sm87", **env: str):
    return run([sys.executable, str(JETSON / "engines.py"), "refresh", str(bundle), "--trtexec", str(trtexec)],
               env={"VENUS_TRT_VERSION": key.split("-")[0][3:], "VENUS_GPU_ID": key.split("-", 1)[1], **env})


def calls(trtexec: Path) -> list[str]:
    f = trtexec.parent / "calls"
    return f.read_text().splitlines() if f.exists() else []


def test_build_then_skip_then_rebuild_changed(bundle, trtexec) -> None:
    r = refresh(bundle, trtexec)
    assert r.returncode == 0, r.stderr
    out = bundle / "engines" / "trt10.3.0-orin-nano-sm87"
    assert (out / "audio" / "encoder.fp16.engine").is_file() and (out / "vision.fp16.engine").is_file()
    assert (bundle / "engines" / "current").resolve() == out.resolve()
    stamp = json.loads((out / "vision.fp16.json").read_text())
    assert stamp["onnx_sha256"] == engines.sha256(bundle / "vision.onnx") and stamp["precision"] == "fp16"
    assert len(calls(trtexec)) == 2 and "--fp16" in calls(trtexec)[0]
    # unchanged: nothing runs
    r = refresh(bundle, trtexec)
    assert r.stdout.count("up to date") == 2 and len(calls(trtexec)) == 2
    # one graph changed: only it is rebuilt
    (bundle / "vision.onnx").write_bytes(b"onnx-vision-v2")
    r = refresh(bundle, trtexec)
    assert "built       vision.onnx" in r.stdout and len(calls(trtexec)) == 3


def test_new_tensorrt_rebuilds_and_prunes_the_old_key(bundle, trtexec) -> None:
    assert refresh(bundle, trtexec).returncode == 0
    r = refresh(bundle, trtexec, key="trt10.7.0-orin-nano-sm87")  # a JetPack upgrade
    assert r.returncode == 0 and r.stdout.count("built      ") == 2
    assert "removed     engines/trt10.3.0-orin-nano-sm87" in r.stdout
    assert sorted(p.name for p in (bundle / "engines").iterdir()) == ["current", "trt10.7.0-orin-nano-sm87"]


def test_failure_names_the_graph_and_trtexecs_reason(bundle, trtexec) -> None:
    r = refresh(bundle, trtexec, FAIL_TRTEXEC="1")
    assert r.returncode == 1
    assert "could not build audio/encoder.onnx (fp16)" in r.stderr and "no profile" in r.stderr


def test_command_with_shapes_and_int8(tmp_path) -> None:
    cmd = engines.trtexec_command("trtexec", Path("a.onnx"), Path("a.int8.engine"), "int8",
                                  {"mel": ["1x80x100", "1x80x100", "1x80x3000"]})
    assert cmd[:4] == ["trtexec", "--onnx=a.onnx", "--saveEngine=a.int8.engine", "--skipInference"]
    assert "--int8" in cmd and "--fp16" in cmd
    assert "--maxShapes=mel:1x80x3000" in cmd and "--minShapes=mel:1x80x100" in cmd


def test_key_from_the_device_tree(tmp_path, monkeypatch) -> None:
    (tmp_path / "proc" / "device-tree").mkdir(parents=True)
    (tmp_path / "proc" / "device-tree" / "model").write_bytes(b"NVIDIA Jetson AGX Orin Developer Kit\0")
    monkeypatch.delenv("VENUS_GPU_ID", raising=False)
    assert engines.gpu_id(str(tmp_path)) == "agx-orin-sm87"


@pytest.mark.parametrize("make, words", [
    (lambda b: b / "missing", "is not a directory"),
    (lambda b: (b / "empty").mkdir() or b / "empty", "holds no ONNX graphs"),
])
def test_bad_bundles(tmp_path, trtexec, make, words) -> None:
    r = refresh(make(tmp_path), trtexec)
    assert r.returncode == 1 and words in r.stderr


def test_dry_run_builds_nothing(bundle, trtexec) -> None:
    r = run([sys.executable, str(JETSON / "engines.py"), "refresh", str(bundle), "--dry-run"],
            env={"VENUS_TRT_VERSION": "10.3.0", "VENUS_GPU_ID": "orin"})
    assert r.returncode == 0 and r.stdout.count("would run") == 2 and not (bundle / "engines").exists()


def test_manifest_sets_precision_and_profile(bundle, trtexec) -> None:
    manifest = {"format": "venus-bundle", "parts": [
        {"name": "audio-int8", "kind": "onnx", "role": "audio", "precision": "int8", "files": ["audio/encoder.onnx"],
         "trt_profile": {"mel": ["1x80x100", "1x80x100", "1x80x3000"]}},
        {"name": "vision-fp16", "kind": "onnx", "role": "vision", "precision": "fp16", "files": ["vision.onnx"]},
    ]}
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    assert refresh(bundle, trtexec).returncode == 0
    audio, vision = sorted(calls(trtexec), key=lambda c: "vision" in c)
    assert "--int8" in audio and "--maxShapes=mel:1x80x3000" in audio and "encoder.int8.engine" in audio
    assert "--int8" not in vision and "--fp16" in vision and "Shapes" not in vision
    (bundle / "manifest.json").write_text("{not json")
    r = refresh(bundle, trtexec)
    assert r.returncode == 1 and "is not a readable manifest" in r.stderr


def test_dynamic_inputs_without_a_range_are_skipped_not_guessed(bundle, trtexec) -> None:
    # the ONNX builder's entries: one "file", input shapes read back from the graph
    manifest = {"parts": [
        {"name": "audio", "kind": "onnx", "file": "audio/encoder.onnx", "precision": "fp16",
         "inputs": [{"name": "mel", "shape": [1, 80, "frames"], "dtype": "float32"}]},
        {"name": "vision", "kind": "onnx", "file": "vision.onnx", "precision": "fp16",
         "inputs": [{"name": "pixels", "shape": [1, 3, 448, 448], "dtype": "float32"}]},
    ]}
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    r = refresh(bundle, trtexec)
    assert r.returncode == 0, r.stderr
    assert "skipped     audio/encoder.onnx: dynamic inputs mel need a shape range" in r.stdout
    assert [c for c in calls(trtexec) if "vision.onnx" in c] and not [c for c in calls(trtexec) if "encoder" in c]
    shapes = bundle.parent / "shapes.json"
    shapes.write_text(json.dumps({"audio/encoder.onnx": {"mel": ["1x80x100", "1x80x100", "1x80x3000"]}}))
    r = run([sys.executable, str(JETSON / "engines.py"), "refresh", str(bundle), "--trtexec", str(trtexec),
             "--shapes", str(shapes)], env={"VENUS_TRT_VERSION": "10.3.0", "VENUS_GPU_ID": "orin-nano-sm87"})
    assert r.returncode == 0 and "built       audio/encoder.onnx" in r.stdout
