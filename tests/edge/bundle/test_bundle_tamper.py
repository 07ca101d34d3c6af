"""The tamper matrix: every way a bundle can be changed after the build, on a real exported bundle.

The runtime (open_bundle, what the Venus frontend and voice call first) and
`venus-export verify` run the same check, so each case asserts that both
refuse it or both accept it, that the runtime says so in one sentence (the one
verify prints), and that neither prints a traceback.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from edge.bundle.check import DEVICES
from edge.bundle.manifest import sha256_file
from edge.bundle.reader import BundleError, open_bundle
from edge.bundle.settings import VenusSettings
from export.cli import main as export_main

LLM, TTS, AUDIO, EXTRAS, NOISE = ("llm/llm-F16.gguf", "tts/tts-F16.gguf", "onnx/audio.fp32.onnx",
                                  "tts/tts-extras.npz", "onnx/token2wav_noise.npy")


def manifest(root: Path) -> dict:
    return json.loads((root / "manifest.json").read_text())


def edit(root: Path, fn: Callable[[dict], None]) -> None:
    m = manifest(root)
    fn(m)
    (root / "manifest.json").write_text(json.dumps(m))


def rehash(root: Path, rel: str) -> None:
    """What someone covering their tracks does: the manifest made to match the changed file."""
    edit(root, lambda m: m["files"][rel].update(sha256=sha256_file(root / rel), size=(root / rel).stat().st_size))


def flip(root: Path, rel: str, at: float = 0.5) -> None:
    data = bytearray((root / rel).read_bytes())
    data[int(len(data) * at)] ^= 0x10
    (root / rel).write_bytes(bytes(data))


def truncate(root: Path, rel: str, keep: float = 0.7) -> None:
    data = (root / rel).read_bytes()
    (root / rel).write_bytes(data[: int(len(data) * keep)])


def outside_copy(root: Path, rel: str) -> Path:
    """An identical copy of a bundle file outside the bundle (its hash still matches)."""
    dst = root.parent / "elsewhere" / Path(rel).name
    dst.parent.mkdir(exist_ok=True)
    shutil.copy(root / rel, dst)
    return dst


def listed_outside(root: Path, name: str) -> None:
    """A manifest entry naming a file outside the bundle, with that file's true hash."""
    target = outside_copy(root, LLM)
    edit(root, lambda m: m["files"].update({name.format(target=target): {"sha256": sha256_file(target),
                                                                          "size": target.stat().st_size}}))


def symlink_out(root: Path, rel: str) -> None:
    target = outside_copy(root, rel)
    (root / rel).unlink()
    (root / rel).symlink_to(target)


def dir_symlink_out(root: Path) -> None:
    shutil.copytree(root / "tts", root.parent / "tts-elsewhere")
    shutil.rmtree(root / "tts")
    (root / "tts").symlink_to(root.parent / "tts-elsewhere")


def symlink_in(root: Path) -> None:
    """A listed file made a link to a renamed copy of itself, inside the bundle, listed under its new name too."""
    (root / LLM).rename(root / "llm" / "moved.gguf")
    (root / LLM).symlink_to("moved.gguf")
    edit(root, lambda m: m["files"].update({"llm/moved.gguf": m["files"][LLM]}))


def manifest_symlink(root: Path) -> None:
    outside = root.parent / "manifest-elsewhere.json"
    shutil.move(root / "manifest.json", outside)
    (root / "manifest.json").symlink_to(outside)


def venus_json_with_damage(root: Path) -> None:
    (root / "venus.json").write_text(json.dumps({"verify_hashes": False}))
    flip(root, LLM)


def bad_gguf_header(root: Path) -> None:
    data = bytearray((root / LLM).read_bytes())
    data[8:16] = (10 ** 9).to_bytes(8, "little")  # a tensor count the file cannot hold
    (root / LLM).write_bytes(bytes(data))
    rehash(root, LLM)


def device_built(root: Path) -> None:
    """What a device adds itself: engines/<key>/ with engines/current pointing at it, onnxruntime's cache."""
    (root / "engines" / "orin-sm87").mkdir(parents=True)
    (root / "engines" / "orin-sm87" / "audio.fp32.engine").write_bytes(b"x")
    (root / "engines" / "current").symlink_to("orin-sm87")
    (root / ".cache" / "trt").mkdir(parents=True)
    (root / ".cache" / "trt" / "x").write_text("x")


# case -> (what it does to a copy of the bundle, refused?)
CASES: dict[str, tuple[Callable[[Path], None], bool]] = {
    "untouched": (lambda r: None, False),
    "flipped byte in the LLM GGUF": (lambda r: flip(r, LLM), True),
    "flipped byte in an ONNX graph": (lambda r: flip(r, AUDIO, 0.9), True),
    "truncated TTS GGUF": (lambda r: truncate(r, TTS), True),
    "truncated GGUF, manifest re-hashed": (lambda r: (truncate(r, LLM), rehash(r, LLM)), True),
    "GGUF header claims too many tensors, re-hashed": (bad_gguf_header, True),
    "truncated ONNX graph, re-hashed": (lambda r: (truncate(r, AUDIO, 0.5), rehash(r, AUDIO)), True),
    "truncated npz, re-hashed": (lambda r: (truncate(r, EXTRAS, 0.9), rehash(r, EXTRAS)), True),
    "truncated npy, re-hashed": (lambda r: (truncate(r, NOISE, 0.9), rehash(r, NOISE)), True),
    "deleted graph": (lambda r: (r / AUDIO).unlink(), True),
    "added file": (lambda r: (r / "onnx" / "extra.onnx").write_bytes(b"\x08\x07"), True),
    "added unfinished build file": (lambda r: (r / "llm" / "llm-Q8_0.gguf.partial").write_bytes(b"GGUF"), True),
    "added venus.json below the top": (lambda r: (r / "llm" / "venus.json").write_text("{}"), True),
    "symlink into the bundle": (symlink_in, True),
    "unlisted symlink to a listed file": (lambda r: (r / "alias.gguf").symlink_to(LLM), True),
    "symlink out of the bundle": (lambda r: symlink_out(r, TTS), True),
    "directory symlinked out": (dir_symlink_out, True),
    "manifest is a symlink": (manifest_symlink, True),
    "traversal path": (lambda r: listed_outside(r, "../elsewhere/llm-F16.gguf"), True),
    "absolute path": (lambda r: listed_outside(r, "{target}"), True),
    "unnormalised path": (lambda r: edit(r, lambda m: m["files"].update({"llm/./x": m["files"][LLM]})), True),
    "missing hash": (lambda r: edit(r, lambda m: m["files"][LLM].pop("sha256")), True),
    "part file not hashed": (lambda r: edit(r, lambda m: m["files"].pop(TTS)), True),
    "emptied file list": (lambda r: edit(r, lambda m: m.update(files={})), True),
    "no file list": (lambda r: edit(r, lambda m: m.pop("files")), True),
    "wrong variant": (lambda r: edit(r, lambda m: m.update(variant="video")), True),
    "no variant": (lambda r: edit(r, lambda m: m.pop("variant")), True),
    "unknown target device": (lambda r: edit(r, lambda m: m["target"].update(device="toaster")), True),
    "files is a list": (lambda r: edit(r, lambda m: m.update(files=list(m["files"]))), True),
    "a file entry is a number": (lambda r: edit(r, lambda m: m["files"].update({LLM: 5})), True),
    "size is text": (lambda r: edit(r, lambda m: m["files"][LLM].update(size="3348480")), True),
    "size is true": (lambda r: edit(r, lambda m: m["files"][LLM].update(size=True)), True),
    "parts is a mapping": (lambda r: edit(r, lambda m: m.update(parts={})), True),
    "a part is a number": (lambda r: edit(r, lambda m: m["parts"].append(1)), True),
    "a part's files is text": (lambda r: edit(r, lambda m: m["parts"][0].update(files=LLM)), True),
    "manifest is a list": (lambda r: (r / "manifest.json").write_text("[]"), True),
    "venus.json turning hashes off over a damaged GGUF": (venus_json_with_damage, True),
    "site venus.json": (lambda r: (r / "venus.json").write_text(json.dumps({"threads": 2})), False),
    "device-built engines and caches": (device_built, False),
    "engines/ is a symlink to /etc": (lambda r: (r / "engines").symlink_to("/etc"), True),
    "a symlink inside engines/": (lambda r: ((r / "engines").mkdir(), (r / "engines" / "k").symlink_to("/etc")), True),
    "engines/current leads out of engines/": (lambda r: ((r / "engines").mkdir(),
                                                         (r / "engines" / "current").symlink_to("/etc")), True),
    "an unlisted GGUF under .cache": (lambda r: ((r / ".cache").mkdir(), shutil.copy(r / LLM, r / ".cache" / "x.gguf")),
                                      True),
    ".cache is a symlink": (lambda r: (r / ".cache").symlink_to(r / "llm"), True),
    "a part's precision is a list": (lambda r: edit(r, lambda m: m["parts"][0].update(precision=["F16"])), True),
    "manifest nested 100000 deep": (lambda r: (r / "manifest.json").write_text("[" * 100000 + "]" * 100000), True),
}


@pytest.fixture
def copy(exported_audio_bundle: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(exported_audio_bundle, tmp_path / "bundle", symlinks=True))


@pytest.mark.parametrize("case", list(CASES))
def test_the_runtime_refuses_exactly_what_verify_refuses(case: str, copy: Path, capsys) -> None:
    change, refused = CASES[case]
    change(copy)
    try:
        open_bundle(copy, device="cpu")
        runtime = None
    except BundleError as exc:
        runtime = str(exc)
    capsys.readouterr()
    code = export_main(["verify", str(copy)])
    out = capsys.readouterr()
    printed = out.out + out.err
    assert "Traceback" not in printed
    assert (runtime is not None) == refused, runtime
    assert (code != 0) == refused, printed
    if refused:
        assert "\n" not in runtime and runtime.endswith(".") and ". " not in runtime, runtime
        assert runtime in printed  # verify gives the very sentence the runtime refuses with


def test_a_venus_json_cannot_turn_the_check_off(exported_audio_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "venus.json").write_text(json.dumps({"verify_hashes": False}))
    with pytest.raises(ValueError, match=r"venus.json: unknown Venus setting\(s\) verify_hashes") as err:
        VenusSettings.load(tmp_path, {})
    assert "\n" not in str(err.value)


def test_the_device_table_is_the_exporters() -> None:
    from export.plan import DEVICES as EXPORT_DEVICES

    assert set(DEVICES) == set(EXPORT_DEVICES)


def test_the_gguf_reader_agrees_with_the_gguf_package(exported_audio_bundle: Path) -> None:
    """The hand-written header check reads the same tensor table as the `gguf` package (present at build time)."""
    gguf = pytest.importorskip("gguf")
    from gguf.constants import GGML_QUANT_SIZES

    from edge.bundle.structure import GGML_BLOCKS, gguf_problem

    assert GGML_BLOCKS == {int(t): v for t, v in GGML_QUANT_SIZES.items()}
    for rel in (LLM, TTS):
        reader = gguf.GGUFReader(exported_audio_bundle / rel)
        assert reader.tensors and gguf_problem(exported_audio_bundle / rel) is None
