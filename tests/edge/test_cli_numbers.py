"""Numbers on the command line are range-checked through the real parser: one sentence, exit 2, no traceback."""
from __future__ import annotations

import subprocess
import sys

import pytest


def venus_edge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, phrase", [
    (["--chunk-ms", "0"], "chunk_ms is 0; it must be from 10 to 10000 ms"),
    (["--chunk-ms", "-20"], "chunk_ms is -20; it must be from 10 to 10000 ms"),
    (["--chunk-ms", "99999999999"], "chunk_ms is 99999999999; it must be from 10 to 10000 ms"),
    (["--chunk-ms", "995", "--echo-cancel", "on"], "chunk_ms must be a multiple of 10, not 995"),
    (["--threads", "0"], "threads is 0; it must be at least 1"),
])
def test_a_bad_number_is_one_sentence(args, phrase, speech_wav, script, tmp_path):
    done = venus_edge("--mic", str(speech_wav), "--speaker", "null", "--journal", str(tmp_path / "j"),
                      "--frontend", f"scripted:{script}", "--voice", "null", "--fast", *args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("venus-edge:")]
    assert len(lines) == 1 and phrase in lines[0], done.stderr
    assert not (tmp_path / "j").exists()  # refused before anything started


def test_a_good_chunk_length_runs(speech_wav, script, tmp_path):
    done = venus_edge("--mic", str(speech_wav), "--speaker", "null", "--journal", str(tmp_path / "j"),
                      "--frontend", f"scripted:{script}", "--voice", "null", "--fast", "--chunk-ms", "500")
    assert done.returncode == 0, done.stderr
