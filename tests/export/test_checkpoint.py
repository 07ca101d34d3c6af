"""The tiny checkpoint generator and the lazy checkpoint reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer

from edge.protocol.tokens import PROTOCOL_TOKENS
from export.checkpoint import CheckpointReader
from export.errors import ExportError
from export.llm_gguf import convert_llm
from export.special_tokens import MINICPMO_SPECIALS
from export.tts_gguf import convert_tts


def test_tiny_layout_has_the_real_files_and_keys(tiny_omni: Path, tiny_audio: Path):
    for ckpt in (tiny_omni, tiny_audio):
        names = {p.name for p in ckpt.iterdir()}
        assert {"config.json", "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json",
                "vocab.json", "merges.txt", "added_tokens.json"} <= names
        assert len(list(ckpt.glob("model-*-of-*.safetensors"))) >= 2
        config = json.loads((ckpt / "config.json").read_text())
        for key in ("hidden_size", "num_hidden_layers", "num_key_value_heads", "head_dim", "vocab_size",
                    "audio_config", "tts_config", "query_num", "audio_pool_step", "init_vision", "init_tts"):
            assert key in config, key
    assert "vision_config" in json.loads((tiny_omni / "config.json").read_text())


def test_variants_differ_by_the_vision_tower(tiny_omni: Path, tiny_audio: Path):
    omni, audio = CheckpointReader(tiny_omni), CheckpointReader(tiny_audio)
    assert (omni.variant, audio.variant) == ("omni", "audio")
    assert omni.names("vpm.") and omni.names("resampler.")
    assert not audio.names("vpm.") and not audio.names("resampler.")
    for r in (omni, audio):
        assert r.names("llm.") and r.names("tts.")
        assert r.names("apm.") and r.names("audio_projection_layer.")


def test_every_protocol_and_special_token_is_one_tokenizer_entry(tiny_audio: Path):
    tok = Tokenizer.from_file(str(tiny_audio / "tokenizer.json"))
    for t in PROTOCOL_TOKENS + MINICPMO_SPECIALS:
        assert len(tok.encode(t, add_special_tokens=False).ids) == 1, t


def test_bf16_tensors_upcast_exactly_and_stream_in_blocks(tiny_audio: Path):
    r = CheckpointReader(tiny_audio)
    name = "llm.model.embed_tokens.weight"
    info = r.info(name)
    assert info.dtype == "BF16"
    want = load_file(str(info.shard))[name].float().numpy()
    got = r.get(name)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    blocks = list(r.blocks(name, max_bytes=info.nbytes // 5))
    assert len(blocks) > 1 and np.array_equal(np.concatenate(blocks), want)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _rename(ckpt: Path, old: str, new: str) -> None:
    index_path = ckpt / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    shard = index["weight_map"].pop(old)
    tensors = load_file(str(ckpt / shard))
    tensors[new] = tensors.pop(old)
    save_file(tensors, str(ckpt / shard))
    index["weight_map"][new] = shard
    index_path.write_text(json.dumps(index))


def test_renamed_llm_tensor_is_named_in_one_sentence(tiny_audio: Path, tmp_path: Path):
    ckpt = _copy(tiny_audio, tmp_path / "c")
    _rename(ckpt, "llm.model.layers.1.self_attn.k_norm.weight", "llm.model.layers.1.self_attn.key_norm.weight")
    with pytest.raises(ExportError) as e:
        convert_llm(CheckpointReader(ckpt), tmp_path / "x.gguf", progress=False)
    msg = str(e.value)
    assert "llm.model.layers.1.self_attn.key_norm.weight" in msg
    assert "llm.model.layers.1.self_attn.k_norm.weight" in msg
    assert msg.count(".") >= 1 and "\n" not in msg
    assert not (tmp_path / "x.gguf").exists()


def test_missing_tts_tensor_is_named(tiny_audio: Path, tmp_path: Path):
    ckpt = _copy(tiny_audio, tmp_path / "c")
    name = "tts.projector_semantic.linear2.bias"
    index = json.loads((ckpt / "model.safetensors.index.json").read_text())
    shard = index["weight_map"].pop(name)
    tensors = load_file(str(ckpt / shard))
    del tensors[name]
    save_file(tensors, str(ckpt / shard))
    (ckpt / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ExportError, match=f"Missing tensor {name}"):
        convert_tts(CheckpointReader(ckpt), tmp_path / "t.gguf", progress=False)


def test_tensor_of_no_known_part_is_refused(tiny_audio: Path, tmp_path: Path):
    ckpt = _copy(tiny_audio, tmp_path / "c")
    _rename(ckpt, "llm.model.norm.weight", "decoder.norm.weight")
    with pytest.raises(ExportError, match="Unexpected tensor decoder.norm.weight"):
        CheckpointReader(ckpt)


def test_vision_tensor_in_audio_variant_is_refused(tiny_audio: Path, tmp_path: Path):
    ckpt = _copy(tiny_audio, tmp_path / "c")
    _rename(ckpt, "apm.layer_norm.weight", "vpm.post_layernorm.weight")
    with pytest.raises(ExportError, match="vpm.post_layernorm.weight.*Audio variant"):
        CheckpointReader(ckpt)


@pytest.mark.parametrize("damage, phrase", [
    (lambda c: (c / "config.json").unlink(), "no config.json"),
    (lambda c: next(c.glob("model-00002-*.safetensors")).unlink(), "is missing"),
    (lambda c: (c / "config.json").write_text("{"), "not valid JSON"),
])
def test_damaged_checkpoints_get_one_sentence(tiny_audio: Path, tmp_path: Path, damage, phrase):
    ckpt = _copy(tiny_audio, tmp_path / "c")
    damage(ckpt)
    with pytest.raises(ExportError, match=phrase):
        CheckpointReader(ckpt)


def test_truncated_shard_is_refused(tiny_audio: Path, tmp_path: Path):
    ckpt = _copy(tiny_audio, tmp_path / "c")
    shard = next(ckpt.glob("model-00001-*.safetensors"))
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 2])
    with pytest.raises(ExportError, match="truncated"):
        CheckpointReader(ckpt)


def test_generation_is_seeded(tmp_path: Path):
    from export.tiny import llm_tensors, make_config

    config = make_config("audio", 1024, 1, 0)
    a, b = llm_tensors(config, 7), llm_tensors(config, 7)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["llm.lm_head.weight"], llm_tensors(config, 8)["llm.lm_head.weight"])
