"""Session settings: one typed object per node, built once, and a bad value is one sentence before anything runs."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from edge.cli import session_parser
from edge.graph.endpoints import remove_runtime_dir
from edge.graph.loader import load_class
from edge.graph.plain import from_plain
from edge.nodes import NODES
from edge.session import ALL_NODES, SessionConfig, SettingsError, make_supervisor
from edge.settings import default_threads, node_settings


@pytest.fixture
def wav(tmp_path):
    path = tmp_path / "in.wav"
    sf.write(str(path), np.zeros(16000, np.float32), 16000)
    return path


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


@pytest.mark.parametrize("flag, value, sentence", [
    ("--chunk-ms", "0", "chunk_ms is 0; it must be from 10 to 10000 ms (the model hears whole chunks)."),
    ("--chunk-ms", "-20", "chunk_ms is -20; it must be from 10 to 10000 ms (the model hears whole chunks)."),
    ("--threads", "0", "threads is 0; it must be at least 1."),
])
def test_a_bad_value_on_the_command_line_is_one_sentence(tmp_path, wav, flag, value, sentence):
    script = tmp_path / "s.txt"
    script.write_text("0 speak hi\n")
    r = cli("--mic", str(wav), "--speaker", "null", "--script", str(script), "--journal", str(tmp_path / "j"),
            flag, value, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == f"venus-edge: {sentence}"
    assert not (tmp_path / "j").exists()  # nothing ran


def test_bad_values_from_code_or_a_journal_are_one_sentence_each():
    for bad, words in [({"speaker_rate": 0}, "speaker_rate is 0"),
                       ({"pace": "fast"}, "pace is 'fast'; it must be a number"),
                       ({"chunk_ms": 1.5}, "chunk_ms is 1.5; it must be a whole number"),
                       ({"duck_gain": 1.5}, "between 0 and 1"), ({"echo_cancel": "maybe"}, "echo_cancel must be"),
                       ({"room_echo": {"delay": 3}}, "unknown room_echo setting"),
                       ({"echo_cancel": True, "chunk_ms": 333}, "multiple of 10"),
                       ({"frontend_busy_s": "long"}, "frontend_busy_s is 'long'")]:
        with pytest.raises(SettingsError, match=words):
            make_supervisor({**SessionConfig(mic="in.wav").as_dict(), **bad}, ALL_NODES)


def test_every_consumer_gets_the_same_threads_and_chunk_length():
    cfg = SessionConfig(mic="in.wav", threads=3, chunk_ms=500)
    s = node_settings(cfg, ALL_NODES)
    assert s["capture"].threads == s["harness"].threads == 3
    assert s["frontend"].models["threads"] == s["speech"].models["threads"] == 3  # what the model builders read
    assert s["capture"].chunk_ms == s["speech"].chunk_ms == s["frontend"].models["chunk_ms"] == 500
    assert s["recorder"].session == cfg.as_dict()  # the journal header replay rebuilds the session from


def test_the_command_line_and_code_share_one_threads_default():
    args = session_parser().parse_args([])
    assert args.threads is None  # the CLI leaves it to SessionConfig ...
    assert SessionConfig().threads == default_threads()  # ... whose default the CLI's help describes


def test_each_node_gets_its_own_settings_back_in_its_process():
    cfg = SessionConfig(mic="in.wav", room_echo={"delay_ms": 80.0}, extra={"harness": {"dir": "h"}, "asr": "base"})
    sup = make_supervisor(cfg, ALL_NODES)
    built = node_settings(cfg, ALL_NODES)
    for name in ALL_NODES:
        cls = load_class(NODES[name])
        assert from_plain(cls.settings_type, sup.configs[name]) == built[name], name
    assert built["capture"].duplex.room is not None and built["capture"].duplex.room.delay_ms == 80.0
    assert built["harness"].harness == {"dir": "h"}
    sup.ctx.destroy(linger=0)
    remove_runtime_dir(sup.ep)


def test_a_session_config_survives_its_flat_form():
    cfg = SessionConfig(mic="m.wav", chunk_ms=200, extra={"asr": "base", "venus": {"threads": 2}})
    assert SessionConfig.from_dict(cfg.as_dict()) == cfg
