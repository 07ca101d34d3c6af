"""venus-export build and verify on tiny bundles: manifest, re-runs, fit refusal, damaged bundles."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from export.build import BuildOptions, build
from export.cli import main
from export.errors import ExportError
from export.manifest import MANIFEST, sha256_file
from export.verify import verify


@pytest.mark.parametrize("which", ["omni", "audio"])
def test_bundle_manifest_describes_every_file(which, request):
    bundle = request.getfixturevalue(f"{which}_bundle")
    m = json.loads((bundle / MANIFEST).read_text())
    assert m["variant"] == which
    names = {p["name"] for p in m["parts"]}
    assert {"llm-F16", "llm-Q8_0", "llm-Q4_K_M", "tts-F16"} <= names
    on_disk = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*")
                     if p.is_file() and p.name != MANIFEST and not str(p.relative_to(bundle)).startswith("."))
    assert sorted(m["files"]) == on_disk
    for rel, meta in m["files"].items():
        assert meta["size"] == (bundle / rel).stat().st_size and meta["sha256"] == sha256_file(bundle / rel)
    assert "config.json" in m["source"]["files"] and any(f.endswith(".safetensors") for f in m["source"]["files"])
    assert {"gguf", "llama_cpp_python", "numpy"} <= set(m["tools"])
    assert m["target"]["device"] == "cpu" and m["target"]["fit"]["checked"]
    assert m["tensorrt"]["status"] in ("absent", "available") and m["tensorrt"]["reason"]
    llm = next(p for p in m["parts"] if p["name"] == "llm-F16")
    assert llm["shapes"]["arch"] == "qwen3" and llm["shapes"]["protocol_token_ids"]["<delegate>"] > 0
    extras = next(p for p in m["parts"] if p["name"] == "tts-extras")
    assert extras["files"] == ["tts/tts-extras.npz"] and extras["shapes"]["format"] == "npz"
    assert extras["shapes"]["arrays"]["emb_text.weight"]["dtype"] == "float16"
    # What the device needs from the checkpoint's config travels in the manifest.
    runtime = m["runtime"]
    assert runtime["audio"] == {"sample_rate": 16000, "mel_bins": 80, "chunk_seconds": 1.0, "pool_step": 5,
                                "max_positions": 1500}
    assert ("vision" in runtime) == (which == "omni")
    assert runtime["tts"]["ids_from"] == "vocabulary" and runtime["tts"]["normalize_projected_hidden"] is True
    # A bundle that can speak carries its voice prompt (the GGUF-only audio bundle here cannot).
    voices = [p for p in m["parts"] if p["role"] == "token2wav-voice"]
    assert len(voices) == (1 if which == "omni" else 0)


def test_runtime_settings_follow_the_checkpoint(tiny_audio: Path, tmp_path: Path):
    ckpt = shutil.copytree(tiny_audio, tmp_path / "ckpt")
    config = json.loads((ckpt / "config.json").read_text())
    config["tts_config"].update(text_eos_token_id=7, audio_bos_token_id=8)
    del config["tts_config"]["normalize_projected_hidden"]  # absent: MiniCPM-o's TTS config says False
    config["audio_chunk_length"] = 0.5
    (ckpt / "config.json").write_text(json.dumps(config))
    m = build(ckpt, tmp_path / "b", BuildOptions(types=["F16"], onnx=False, progress=False, threads=1))
    assert m["runtime"]["tts"] == {"text_eos_id": 7, "audio_bos_id": 8, "ids_from": "tts_config",
                                   "normalize_projected_hidden": False, "text_tokens": config["vocab_size"]}
    assert m["runtime"]["audio"]["chunk_seconds"] == 0.5
    config["audio_chunk_length"] = 0.25  # 25 frames: not whole pooled steps
    (ckpt / "config.json").write_text(json.dumps(config))
    with pytest.raises(ExportError, match="audio_chunk_length 0.25 s gives 25 log-mel frames"):
        build(ckpt, tmp_path / "c", BuildOptions(types=["F16"], onnx=False, progress=False, threads=1))


def test_verify_passes_with_parity(omni_bundle: Path, tiny_omni: Path):
    rows = verify(omni_bundle, tiny_omni)
    assert rows and all(r["ok"] for r in rows), [r for r in rows if not r["ok"]]
    checks = {(r["part"], r["check"]) for r in rows}
    assert ("llm-Q4_K_M", "KL vs torch") in checks and ("tts-F16", "top-1 vs torch") in checks
    assert ("llm-F16", "protocol tokens") in checks
    assert {("runtime", "vs checkpoint"), ("token2wav-voice", "codes remade"),
            ("token2wav-voice", "speaker+mel remade")} <= checks
    manifest = json.loads((omni_bundle / MANIFEST).read_text())
    for part in manifest["parts"]:
        if part["kind"] == "onnx":  # every ONNX graph of the bundle has its parity row
            assert any(r["part"] == part["name"] and r["ok"] for r in rows), part["name"]


def test_verify_catches_a_flipped_byte(audio_bundle: Path, tmp_path: Path, capsys):
    bundle = shutil.copytree(audio_bundle, tmp_path / "b")
    target = bundle / "llm" / "llm-Q8_0.gguf"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    rows = verify(bundle)
    bad = [r for r in rows if not r["ok"]]
    assert [r["part"] for r in bad] == ["llm/llm-Q8_0.gguf"]
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["bundle file llm/llm-Q8_0.gguf does not match its sha256 in the manifest; it is damaged or was "
                   "changed after the build, so copy the bundle again or rebuild it with venus-export build."]


def test_verify_catches_a_missing_file(audio_bundle: Path, tmp_path: Path, capsys):
    bundle = shutil.copytree(audio_bundle, tmp_path / "b")
    (bundle / "tts" / "tts-extras.npz").unlink()
    assert main(["verify", str(bundle)]) == 1
    out = capsys.readouterr().out
    assert "bundle file tts/tts-extras.npz is missing; copy the bundle again or rebuild it" in out
    assert "FAIL" in out


def test_rebuild_skips_unchanged_parts_and_drops_unasked_ones(tiny_audio: Path, tmp_path: Path, capsys):
    out = tmp_path / "b"
    opts = BuildOptions(types=["F16", "Q8_0"], onnx=False, progress=False, threads=1)
    build(tiny_audio, out, opts)
    stamp = (out / "llm" / "llm-F16.gguf").stat().st_mtime_ns
    capsys.readouterr()
    m = build(tiny_audio, out, BuildOptions(types=["F16"], onnx=False, progress=False, threads=1))
    err = capsys.readouterr().err
    assert "skip llm-F16" in err and "skip tts-F16" in err and "skip tts-extras" in err and "make" not in err
    assert (out / "llm" / "llm-F16.gguf").stat().st_mtime_ns == stamp
    assert not (out / "llm" / "llm-Q8_0.gguf").exists() and "llm/llm-Q8_0.gguf" not in m["files"]


def test_dry_run_writes_nothing(tiny_audio: Path, tmp_path: Path, capsys):
    assert main(["build", str(tiny_audio), "-o", str(tmp_path / "b"), "--types", "Q6_K", "--dry-run"]) == 0
    assert "llm-Q6_K" in capsys.readouterr().out
    assert not (tmp_path / "b").exists()


def test_a_bundle_that_does_not_fit_is_refused(tiny_omni: Path, tmp_path: Path):
    opts = BuildOptions(types=["Q8_0"], encoders=["fp32"], device="orin-nano-4", progress=False)
    with pytest.raises(ExportError, match=r"Refusing the bundle: .*does not fit: needs .* GB"):
        build(tiny_omni, tmp_path / "b", opts)
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("argv, phrase", [
    (["build", "{ckpt}", "-o", "{tmp}/b", "--types", "Q9_X"], "unknown GGUF type 'Q9_X'; choose from F32, BF16, F16"),
    (["build", "{ckpt}", "-o", "{tmp}/b", "--types", "IQ2_XXS"], "IQ2_XXS needs an importance matrix"),
    (["build", "{ckpt}", "-o", "{tmp}/b", "--voice", "{tmp}/none.wav"], "The reference voice"),
    (["build", "{ckpt}", "-o", "{tmp}/b", "--encoders", "fp8"], "Unknown encoder precision 'fp8'"),
    (["build", "{tmp}/nothing", "-o", "{tmp}/b"], "does not exist"),
    (["build", "{ckpt}", "-o", "{tmp}/b", "--kv", "q9"], "Unknown KV cache type 'q9'"),
    (["build", "{ckpt}", "-o", "{tmp}/b", "--device", "toaster"], "Unknown target device 'toaster'"),
    (["verify", "{tmp}"], "has no manifest.json"),
])
def test_bad_input_is_one_sentence_not_a_traceback(argv, phrase, tiny_audio: Path, tmp_path: Path, capsys):
    argv = [a.format(ckpt=tiny_audio, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and phrase in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_quantized_only_bundle_keeps_its_f16_bases_out_of_the_manifest(tiny_audio: Path, tmp_path: Path):
    out = tmp_path / "b"
    m = build(tiny_audio, out, BuildOptions(types=["Q4_K_M"], tts_types=["Q8_0"], onnx=False, progress=False,
                                            threads=1))
    assert {p["name"] for p in m["parts"]} == {"llm-Q4_K_M", "tts-Q8_0", "tts-extras"}
    assert all(not f.startswith(".") for f in m["files"]) and (out / ".cache" / "llm-F16.gguf").is_file()
    rows = verify(out, tiny_audio)
    assert all(r["ok"] for r in rows), [r for r in rows if not r["ok"]]
    assert {r["part"] for r in rows} >= {"llm-Q4_K_M", "tts-Q8_0"}
