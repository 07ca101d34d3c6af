"""The GGUF vocabulary: protocol tokens are CONTROL whatever the source says, and must exist."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from edge.backends.llama import LlamaModel
from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.llm_gguf import convert_llm


def _edit_tokenizer(ckpt: Path, edit) -> None:
    path = ckpt / "tokenizer.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def test_protocol_token_marked_non_special_in_the_source_is_still_control(tiny_audio: Path, tmp_path: Path):
    ckpt = shutil.copytree(tiny_audio, tmp_path / "c")

    def demote(data):  # a fine-tune that added its tokens as plain (non-special) added tokens
        for t in data["added_tokens"]:
            if t["content"] in ("<delegate>", "</backend>"):
                t["special"] = False
    _edit_tokenizer(ckpt, demote)
    out = tmp_path / "llm.gguf"
    convert_llm(CheckpointReader(ckpt), out, progress=False)
    with LlamaModel(out, 256, 1) as m:
        for tok in ("<delegate>", "</backend>"):
            assert len(m.tokenize(tok, special=True)) == 1
            assert len(m.tokenize(f"tool says {tok} here", special=False)) > 4  # not one injected id
            assert m.tokenize(tok, special=True)[0] not in m.tokenize(f"x {tok}", special=False)


def test_missing_protocol_token_is_refused_in_one_sentence(tiny_audio: Path, tmp_path: Path):
    ckpt = shutil.copytree(tiny_audio, tmp_path / "c")
    _edit_tokenizer(ckpt, lambda d: d.update(added_tokens=[t for t in d["added_tokens"] if t["content"] != "<unit>"]))
    with pytest.raises(ExportError, match="Token <unit> is not a single entry of the tokenizer"):
        convert_llm(CheckpointReader(ckpt), tmp_path / "llm.gguf", progress=False)
    assert not (tmp_path / "llm.gguf").exists()


def test_non_bpe_tokenizer_is_refused(tiny_audio: Path, tmp_path: Path):
    ckpt = shutil.copytree(tiny_audio, tmp_path / "c")
    _edit_tokenizer(ckpt, lambda d: d["model"].update(type="Unigram"))
    with pytest.raises(ExportError, match="holds a Unigram model"):
        convert_llm(CheckpointReader(ckpt), tmp_path / "llm.gguf", progress=False)
