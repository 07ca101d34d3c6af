"""Shared fixtures: tiny Omni and Audio checkpoints and bundles built from them, once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from export.build import BuildOptions, build
from export.tiny import write_tiny

TYPES = ["F16", "Q8_0", "Q4_K_M"]


@pytest.fixture(scope="session")
def tiny_omni(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ckpt") / "omni"
    write_tiny(path, "omni", seed=0)
    return path


@pytest.fixture(scope="session")
def tiny_audio(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ckpt") / "audio"
    write_tiny(path, "audio", seed=1)
    return path


def _bundle(tmp_path_factory, ckpt: Path, name: str, onnx: bool) -> Path:
    out = tmp_path_factory.mktemp("bundle") / name
    build(ckpt, out, BuildOptions(types=TYPES, encoders=["fp32"], onnx=onnx, progress=False, threads=1))
    return out


@pytest.fixture(scope="session")
def omni_bundle(tmp_path_factory, tiny_omni) -> Path:
    return _bundle(tmp_path_factory, tiny_omni, "omni", onnx=True)  # the full bundle


@pytest.fixture(scope="session")
def audio_bundle(tmp_path_factory, tiny_audio) -> Path:
    return _bundle(tmp_path_factory, tiny_audio, "audio", onnx=False)  # GGUF parts only, for speed


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """On a shared 2-core machine a second torch thread mostly spins: tiny models run faster on one."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
