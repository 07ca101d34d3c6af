"""Fixtures: a tiny F16 GGUF, a tiny Omni bundle built by the exporter, a real runtime journal, and one finished
sweep shared by the tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quant_helpers import SCRIPT, SWEEP_TYPES, run_cli
from quant_tiny_gguf import write_tiny_gguf


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny-f16.gguf")


@pytest.fixture(scope="session")
def omni_bundle(request) -> Path:
    """venus-export's own bundle of a tiny Omni checkpoint: the F16 LLM and FP32 audio and vision graphs (the
    session's one Omni export, tests/conftest.py)."""
    from export.onnx_bridge import onnx_available

    if not onnx_available():
        pytest.skip("this exporter cannot build ONNX graphs")
    return request.getfixturevalue("tiny_bundles")["omni"]


@pytest.fixture(scope="session")
def journal(tmp_path_factory) -> Path:
    """A journal recorded by the runtime itself: a scripted frontend over a 9-second tone and a folder of
    frames as the camera, on the virtual clock."""
    import soundfile as sf
    from PIL import Image

    from edge.session import SessionConfig, run_session

    d = tmp_path_factory.mktemp("journal")
    sr = 16000
    t = np.arange(sr * 9) / sr
    sf.write(d / "in.wav", (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), sr)
    (d / "frames").mkdir()
    rng = np.random.default_rng(0)
    for i in range(9):
        Image.fromarray(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)).save(d / "frames" / f"{i:03d}.png")
    (d / "script.txt").write_text(SCRIPT)
    cfg = SessionConfig(mic=str(d / "in.wav"), camera=str(d / "frames"), speaker="null", journal=str(d / "s.journal"),
                        realtime=False, frontend=f"scripted:{d / 'script.txt'}",
                        answer_wait_s=0.0)  # the journal is the file's 9 chunks (the tests count them)
    report = run_session(cfg, inprocess=True)
    assert report.ok, report.reason
    return d / "s.journal"


@pytest.fixture(scope="session")
def sweep(tiny_gguf, journal, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s"
    rc, stdout, stderr = run_cli("sweep", str(tiny_gguf), "--types", SWEEP_TYPES, "--journal", str(journal),
                                 "--threads", "1", "--no-progress", "-o", str(out))
    assert rc == 0, stderr
    return out, stdout
