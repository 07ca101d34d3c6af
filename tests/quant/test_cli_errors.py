"""Bad input gets one clear sentence and exit code 2, never a traceback."""
from __future__ import annotations

import gguf
import pytest

from quant_helpers import run_cli


@pytest.mark.parametrize("args, words", [
    (["sweep", "/nonexistent/model.gguf", "-o", "{tmp}/o"], "does not exist"),
    (["sweep", "{tmp}/notes.txt", "-o", "{tmp}/o"], "not a .gguf"),
    (["sweep", "{tmp}/bad.gguf", "-o", "{tmp}/o"], "not a readable GGUF"),
    (["sweep", "{tmp}", "-o", "{tmp}/o"], "neither a bundle"),
    (["sweep", "{tmp}/codes.gguf", "-o", "{tmp}/o"], "has no text vocabulary"),
    (["sweep", "{model}", "--types", "F16,Q4_X", "-o", "{tmp}/o"], "unknown GGUF type 'Q4_X'"),
    (["sweep", "{model}", "--imatrix", "sometimes", "-o", "{tmp}/o"], "--imatrix 'sometimes'"),
    (["sweep", "{model}", "--journal", "{tmp}/notes.txt", "-o", "{tmp}/o"], "not a venus-edge journal"),
    (["sweep", "{model}", "--text", "{tmp}/missing.txt", "-o", "{tmp}/o"], "does not exist"),
    (["report", "{tmp}"], "no results.json"),
    (["recommend", "{tmp}", "--device", "orin-nano-8"], "no results.json"),
])
def test_bad_input(tiny_gguf, tmp_path, args, words):
    (tmp_path / "notes.txt").write_text("not a model")
    (tmp_path / "bad.gguf").write_bytes(b"GGUF\x03\x00\x00\x00garbage")
    w = gguf.GGUFWriter(str(tmp_path / "codes.gguf"), "llama")  # like the TTS: audio codes, no text vocabulary
    w.add_tokenizer_model("none")
    w.add_vocab_size(6562)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    args = [a.format(tmp=tmp_path, model=tiny_gguf) for a in args]
    rc, _, err = run_cli(*args, *(["--no-progress", "--threads", "1"] if args[0] == "sweep" else []))
    assert rc == 2, err
    assert words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
