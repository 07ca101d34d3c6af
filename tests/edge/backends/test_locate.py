"""Finding models in packages, assembling a split model once, and the one-sentence errors."""
from __future__ import annotations

import hashlib
import importlib.metadata as md
import os

import pytest

from edge.backends import locate
from edge.backends.locate import ModelMissing, PackagedFile, SplitModel

SMALL_PARTS = (
    PackagedFile("silero-vad", "silero_vad/data/silero_vad_half.onnx", "pip install --no-deps silero-vad==6.2.3"),
    PackagedFile("silero-vad", "silero_vad/model.py", "pip install --no-deps silero-vad==6.2.3"),
)


def _small_model(sha: str | None = None) -> SplitModel:
    data = b"".join(p.locate().read_bytes() for p in SMALL_PARTS)
    return SplitModel("small.bin", SMALL_PARTS, len(data), sha or hashlib.sha256(data).hexdigest(),
                      "pip install --no-deps silero-vad==6.2.3"), data


def _one_sentence(text: str) -> bool:
    return "\n" not in text and "Traceback" not in text and text.count(". ") == 0


def test_missing_package_names_the_pip_command():
    f = PackagedFile("venus-edge-absent-model", "absent/model.bin", "pip install venus-edge-absent-model==1.0")
    with pytest.raises(ModelMissing) as err:
        f.locate()
    msg = str(err.value)
    assert "venus-edge-absent-model is not installed" in msg and "`pip install venus-edge-absent-model==1.0`" in msg
    assert _one_sentence(msg)


def test_split_model_is_assembled_once_then_reused(tmp_path):
    model, data = _small_model()
    path = locate.assemble(model, tmp_path)
    assert path.read_bytes() == data
    first = path.stat().st_mtime_ns
    assert locate.assemble(model, tmp_path).stat().st_mtime_ns == first  # the stamp skips the rebuild
    assert not list(tmp_path.glob("*.part"))


def test_corrupt_cached_file_is_rebuilt(tmp_path):
    model, data = _small_model()
    path = locate.assemble(model, tmp_path)
    raw = bytearray(path.read_bytes())
    raw[100] ^= 0xFF
    path.write_bytes(bytes(raw))  # same size, new mtime: the stamp no longer vouches for it
    assert locate.assemble(model, tmp_path).read_bytes() == data


def test_parts_that_do_not_hash_right_are_refused(tmp_path):
    model, _ = _small_model(sha="0" * 64)
    with pytest.raises(ModelMissing) as err:
        locate.assemble(model, tmp_path)
    assert "--force-reinstall" in str(err.value) and _one_sentence(str(err.value))
    assert not (tmp_path / "small.bin").exists()


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("VENUS_EDGE_CACHE", str(tmp_path))
    assert locate.cache_dir() == tmp_path / "models"


def test_the_llm_assembles_from_its_six_packages():
    path = locate.assemble(locate.QWEN_GGUF)
    assert path.stat().st_size == locate.QWEN_GGUF.size
    assert path.read_bytes()[:4] == b"GGUF"


def test_missing_model_package_stops_the_session_with_the_sentence(monkeypatch, tmp_path, capsys):
    """The CLI on the bundled example with silero-vad uninstalled: the fix, in one sentence, no traceback."""
    real = md.distribution

    def distribution(name: str):
        if name == "silero-vad":
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "distribution", distribution)
    from edge import cli

    code = cli.main(["--example", "--speaker", str(tmp_path / "reply.wav"), "--journal", str(tmp_path / "s.journal"),
                     "--fast", "--inprocess", "--voice", "null", "--max-seconds", "120"])
    out = capsys.readouterr()
    assert code != 0
    assert "silero-vad is not installed; install it with `pip install --no-deps silero-vad==6.2.3`" in out.err
    assert "Traceback" not in out.err + out.out
    assert os.path.exists(tmp_path / "s.journal")
