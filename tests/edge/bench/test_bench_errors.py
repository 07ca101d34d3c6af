"""A benchmark's mistake goes to stderr, its figures to stdout: `venus-edge bench ... > figures.txt` keeps only
figures, and the mistake is still seen."""
from __future__ import annotations

import importlib

import pytest

CASES = [("graph", ["--chunks", "ten"], "--chunks needs chunk lengths in ms"),
         ("graph", ["--bus", "carrier pigeon"], "--bus takes direct, proxy or both"),
         ("chat", ["--requests", "0"], "--requests must be between 1 and 200."),
         ("chat", ["--llm-gguf", "/nonexistent/model.gguf"], "does not exist; give the path of a GGUF model file."),
         ("answers", ["--questions", "0"], "--questions must be between 1 and 500."),
         ("voice", ["--questions", "1"], "--questions must be between 10 and"),
         ("voice", ["--bundle", "/nonexistent/bundle"], "is not a bundle (no manifest.json)")]


@pytest.mark.parametrize("bench, argv, said", CASES, ids=lambda c: c if isinstance(c, str) else None)
def test_a_bad_argument_is_said_on_stderr_and_nothing_on_stdout(bench, argv, said, capsys):
    code = importlib.import_module(f"edge.bench.{bench}").main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and said in err and err.startswith(f"venus-edge bench {bench}: ")
