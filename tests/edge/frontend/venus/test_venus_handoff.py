"""The hand-off of hidden states on SpeakText, and the LLM benchmark's last line."""
from __future__ import annotations

import re

import numpy as np

from edge import messages as m
from edge.bench.llm import main as bench_main
from edge.nodes.speech import _hidden_states
from edge.wire.envelope import decode, encode


def test_hidden_states_travel_as_a_float16_payload_frame():
    hidden = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    msg = m.SpeakText("s1", 1, 4, "hi there", 0, "", [11, 12, 13], 8)
    env = decode(encode(msg, seq=1, epoch=0, t_ns=5, src="frontend", payload=[hidden.astype(np.float16).tobytes()]))
    got = _hidden_states(env.msg, env.payload)
    np.testing.assert_allclose(got, hidden, atol=2e-3)
    assert env.msg.token_ids == [11, 12, 13]
    # Without the optional fields (another frontend), or with a payload of the wrong size: text only.
    plain = decode(encode(m.SpeakText("s2", 1, 4, "hi", 0), seq=2, epoch=0, t_ns=5, src="frontend"))
    assert plain.msg.token_ids == [] and _hidden_states(plain.msg, plain.payload) is None
    assert _hidden_states(env.msg, [b"\0" * 10]) is None


def test_bench_llm_prints_its_line(audio_bundle, capsys):
    assert bench_main(["--bundle", str(audio_bundle), "--chunks", "3", "--n-ctx", "1024"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"llm decode [\d.]+ tok/s vs llama\.cpp [\d.]+ tok/s \(ratio [\d.]+, CPU time ratio [\d.]+\), "
                        r"chunk rtf [\d.]+", lines[-1])
    # The baseline runs after the same encoder work; the figure against llama.cpp run alone is printed beside it.
    assert any(re.fullmatch(r"against llama\.cpp run alone \(as before\): prefill ratio [\d.]+, decode ratio [\d.]+",
                            line) for line in lines)
    assert any(line.startswith("llama.cpp after the encoders") for line in lines)


def test_bench_llm_without_replay_compares_with_llama_cpp_alone(audio_bundle, capsys):
    assert bench_main(["--bundle", str(audio_bundle), "--chunks", "2", "--n-ctx", "1024", "--no-replay"]) == 0
    out = capsys.readouterr().out
    assert "run alone" not in out and "after the encoders" not in out
    assert re.search(r"llm decode [\d.]+ tok/s vs llama\.cpp [\d.]+ tok/s \(ratio [\d.]+", out)
