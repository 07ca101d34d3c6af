"""`venus-edge bench tool` through a real session: the Tokyo question reaches mcp-server-time by rules and its
answer is heard as a sentence; every stage from the request's end to the first sample is read from the journal."""
from __future__ import annotations

import re

import pytest

from edge.cli import main


def test_the_tool_bench_times_the_tokyo_answer_from_the_journal(tmp_path, capsys):
    pytest.importorskip("mcp_server_time", reason="pip install mcp-server-time (the harness extra)")
    script = tmp_path / "script.txt"
    script.write_text("2 delegate What time is it in Tokyo?\n")  # the chunk after the question ends
    assert main(["bench", "tool", "--script", str(script), "--router", '{"fast": "general-only"}',
                 "--out", str(tmp_path / "run")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    stages = [re.match(r"\s+(.+?)\s+(\d+\.\d\d) s\s+\(\+(\d+\.\d\d) s\)$", line) for line in lines]
    names = [s.group(1) for s in stages if s]
    assert names == ["frontend delegated", "routed to time.get_current_time by rules", "tool completed",
                     "result released to the frontend", "its words handed to speech", "first sample heard"]
    times = [float(s.group(2)) for s in stages if s]
    assert times == sorted(times)
    answer = next(line for line in lines if line.strip().startswith("answer:"))
    # Every spoken form of the clock (edge/language/say.py): on the hour it is "8 o'clock in the morning".
    assert re.search(r"It's (\d{1,2}(:\d\d| o'clock) in the \w+|midnight|noon) on \w+day in Tokyo\.", answer), answer
    last = re.fullmatch(r"tool answer heard (\d+\.\d\d) s after the request \(rules\)", lines[-1])
    end = float(re.search(r"ends at (\d+\.\d\d) s", lines[0]).group(1))
    assert last and float(last.group(1)) == pytest.approx(times[-1] - end, abs=0.02)
