"""Fixtures of the runtime's tests: tiny bundles as the exporter writes them (exported once per test session in
tests/conftest.py), inputs, scripted frontends, and the embedded default's models. Helpers live in
tests/support/."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

# Threads that wait for work sleep instead of spinning: several models share 2 cores in these tests.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from duplex_helpers import say  # noqa: E402
from venus_support import speechy  # noqa: E402

SUPPORT = Path(__file__).resolve().parents[1] / "support"


@pytest.fixture(scope="session")
def bundle_cache(tiny_bundle_cache) -> Path:
    """Where tests/conftest.py exports the tiny bundles (VENUS_TEST_CACHE keeps them across runs)."""
    return tiny_bundle_cache


@pytest.fixture(scope="session")
def bundles(tiny_bundles) -> dict[str, Path]:
    """Both variants, exported once per test session (tests/conftest.py)."""
    return tiny_bundles


@pytest.fixture(scope="session")
def exported_audio_bundle(bundles) -> Path:
    """An Audio bundle exactly as the exporter writes it: nothing added, nothing edited."""
    return bundles["audio"]


@pytest.fixture(scope="session")
def omni_bundle(bundles) -> Path:
    return bundles["omni"]


@pytest.fixture(scope="session")
def audio_bundle(bundles) -> Path:
    return bundles["audio"]


@pytest.fixture(scope="session")
def input_wav(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("venus-in") / "in.wav"
    sf.write(path, speechy(12.0), 16000, subtype="PCM_16")
    return path


@pytest.fixture(scope="session")
def input_video(tmp_path_factory) -> Path:
    cv2 = pytest.importorskip("cv2", reason="opencv-python-headless (the audio extra) writes the test video")
    path = tmp_path_factory.mktemp("venus-video") / "in.avi"
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, (112, 84))
    for i in range(50):
        frame = np.zeros((84, 112, 3), np.uint8)
        frame[:, : (i * 2) % 112] = (40 * (i % 6), 120, 200)
        out.write(frame)
    out.release()
    return path


@pytest.fixture(scope="session")
def far_speech() -> np.ndarray:
    """Half a minute of the 'assistant' talking, as played by the loudspeaker."""
    text = ("The printing press changed Europe within a single lifetime. Books became cheap, and ideas moved "
            "faster than any ruler could follow. Scholars shared their findings, merchants printed price lists, "
            "and ordinary people began to read in their own languages rather than in Latin.")
    return 0.3 * say(text, "en-us", 170)


@pytest.fixture(scope="session")
def transcriber():
    from edge.detect.asr import Transcriber
    return Transcriber(threads=1)


@pytest.fixture(scope="module")
def frontend():
    """The embedded default's frontend on the virtual clock, one per test module (its chat state is the module's)."""
    from edge.frontend.default.build import build
    fe = build({"threads": 1, "realtime": False})
    yield fe
    fe.close()


@pytest.fixture
def script(tmp_path) -> Path:
    """A scripted frontend's script: speak, delegate, speak."""
    p = tmp_path / "script.txt"
    p.write_text("# chunk action text\n1 speak Hello there.\n3 delegate What is the weather in Paris?\n"
                 "4 speak Let me check.\n")
    return p


@pytest.fixture
def marks_script(tmp_path) -> Path:
    """Speaks, delegates, then yields the floor mid-reply: every kind of mark a timeline shows."""
    p = tmp_path / "script.txt"
    p.write_text("1 speak Hello there.\n3 delegate What is the weather in Paris?\n"
                 "4 speak This is a long answer that keeps going for quite a while, longer than two seconds.\n"
                 "5 interrupt\n")
    return p


@pytest.fixture
def faulty_path(monkeypatch):
    """Child processes can import the test nodes in tests/support (faulty, crashing and bus nodes)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(SUPPORT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.syspath_prepend(str(SUPPORT))
