"""The Jetson install carries the embedded default: the packages the runtime looks its models up in."""
from __future__ import annotations

import re
import tomllib
from importlib import metadata

from deploy_support import JETSON, REPO, run
from test_deploy_detect import R36_4_0, fake_root

from edge.backends.locate import PIPER_JOE, QWEN_PARTS, SILERO_VAD, WHISPER_TINY_EN


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~; \[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def runtime_models() -> dict[str, str]:
    """dist -> pinned requirement, from the runtime's own model table (edge/backends/locate.py)."""
    out = {}
    for model in (*QWEN_PARTS, SILERO_VAD, PIPER_JOE, WHISPER_TINY_EN):
        spec = next(w for w in model.pip.split() if w.lower().startswith(model.dist))
        out[model.dist] = spec
    return out


def setup_dry_run(tmp_path, *extra: str) -> list[str]:
    root = fake_root(tmp_path, R36_4_0, "NVIDIA Jetson Orin Nano Developer Kit", ["nvidia,p3767-0005"])
    r = run([str(JETSON / "setup.sh"), "--dry-run", "--prefix", str(tmp_path / "opt"), *extra],
            env={"VENUS_ROOT_PREFIX": str(root), "VENUS_EDGE_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    return [line[2:] for line in r.stdout.splitlines() if line.startswith("+ ")]


def test_setup_installs_every_model_the_runtime_looks_up(tmp_path) -> None:
    cmds = setup_dry_run(tmp_path)
    [models] = [c for c in cmds if " install " in c and " --no-deps " in c and "faster-whisper" in c]
    for spec in runtime_models().values():
        assert f" {spec}" in models, spec
    # without declared dependencies: silero-vad's torch, faster-whisper's CPU onnxruntime stay out ...
    deps = cmds[cmds.index(models) + 1]
    declared = {_name(r) for r in metadata.requires("faster-whisper") or [] if "extra ==" not in r}
    # ... and faster-whisper's own run-time needs come in by name
    assert declared - {"onnxruntime", "tqdm"} <= {_name(w) for w in deps.split()[deps.split().index("-c") + 2:]
                                                  if not w.startswith("-")}
    assert "onnxruntime" not in {_name(w) for w in (models + " " + deps).split()}
    # before venus-edge itself, whose install is the last one
    assert cmds.index(models) < max(i for i, c in enumerate(cmds) if "[jetson]" in c)
    assert not [c for c in setup_dry_run(tmp_path / "bare", "--no-default-models") if "faster-whisper" in c]


def test_the_model_pins_agree_with_the_models_extra() -> None:
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["models"]
    pins = {_name(r): r for r in extra}
    for dist, spec in runtime_models().items():
        if dist in pins:  # silero-vad is not in the extra (scripts/setup.sh adds it without dependencies)
            assert pins[dist] == spec
    setup = (JETSON / "setup.sh").read_text()
    assert re.search(r'MODEL_PACKAGES="[^"]*faster-whisper>=1\.2', setup) and pins["faster-whisper"] == "faster-whisper>=1.2"


def test_the_offline_wheel_folder_has_them_too(tmp_path) -> None:
    r = run([str(JETSON / "wheels.sh"), str(tmp_path / "w"), "--dry-run"])
    assert r.returncode == 0, r.stderr
    [models] = [line for line in r.stdout.splitlines() if "--no-deps" in line and "faster-whisper" in line]
    assert "--platform manylinux2014_aarch64" in models
    for spec in runtime_models().values():
        assert f" {spec}" in models
