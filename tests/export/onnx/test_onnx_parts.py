"""ONNX parts of a tiny Omni checkpoint: built once in every precision, then checked against torch."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from export.errors import ExportError
from export.onnx import TOLERANCES, build_onnx_parts, verify_onnx_parts
from export.torch_ref.tiny_parts import tiny_media_config, tiny_media_tensors, write_token2wav_assets

HIDDEN = 128  # the LLM width the resampler and audio projector map to (one resampler head)
PRECISIONS = ["fp32", "fp16", "int8"]
GRAPHS = ["vision", "audio", "token2wav_encoder", "token2wav_step", "token2wav_vocoder"]


def media(variant: str, seed: int) -> tuple[dict, dict]:
    config = {**tiny_media_config(variant), "hidden_size": HIDDEN}
    return config, tiny_media_tensors(variant, config, seed)


@pytest.fixture(scope="module")
def t2w_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("token2wav")
    write_token2wav_assets(path, seed=3)  # with the voice-prompt graphs, which run at build time only
    assert (path / "campplus.onnx").is_file() and (path / "speech_tokenizer_v2_25hz.onnx").is_file()
    return path


@pytest.fixture(scope="module")
def omni(tmp_path_factory, t2w_dir):
    config, tensors = media("omni", seed=1)
    out = tmp_path_factory.mktemp("onnx")
    entries = build_onnx_parts(tensors.__getitem__, config, out, PRECISIONS, progress=False, token2wav_dir=t2w_dir,
                               n_timesteps=3)
    rows = verify_onnx_parts(out, tensors.__getitem__, config, token2wav_dir=t2w_dir)
    return SimpleNamespace(config=config, tensors=tensors, out=out, entries=entries, rows=rows)


def _row(rows, part, precision):
    (row,) = [r for r in rows if r["part"] == part and r["precision"] == precision]
    return row


def test_every_part_is_built_in_every_precision(omni):
    built = {(e["name"], e["precision"]) for e in omni.entries if e["kind"] == "onnx"}
    assert built == {(g, p) for g in GRAPHS for p in PRECISIONS}
    for entry in omni.entries:
        assert (omni.out / entry["file"]).is_file()
        assert all(io["dtype"] for io in entry["inputs"] + entry["outputs"])
    # The voice-prompt graphs are used by the exporter and not shipped (the runtime never runs them).
    assert not list(omni.out.glob("campplus*")) and not list(omni.out.glob("speech_tokenizer*"))
    noise = [e for e in omni.entries if e["kind"] == "npy"]
    assert [e["name"] for e in noise] == ["token2wav_noise"]
    assert np.load(omni.out / noise[0]["file"]).shape == (1, 80, 30000)


def test_entries_name_dynamic_axes_and_sources(omni):
    vision = next(e for e in omni.entries if e["name"] == "vision" and e["precision"] == "fp16")
    assert vision["inputs"] == [{"name": "pixels", "shape": [1, 3, "height", "width"], "dtype": "float32"}]
    assert vision["outputs"][0]["shape"] == [1, 64, HIDDEN]
    assert vision["opset"] == 17 and "vpm.post_layernorm.weight" in vision["sources"]
    audio = next(e for e in omni.entries if e["name"] == "audio" and e["precision"] == "int8")
    assert [i["name"] for i in audio["inputs"]] == ["mel", "past_kv"]
    assert audio["inputs"][0]["shape"] == [1, 80, "frames"] and audio["inputs"][1]["shape"][4] == "past"
    assert "QDQ" in audio["method"] and "audio_projection_layer.linear2.weight" in audio["sources"]


def test_token2wav_entries_carry_the_streaming_contract(omni):
    step = next(e for e in omni.entries if e["name"] == "token2wav_step" and e["precision"] == "fp32")
    terms = step["contract"]
    assert (terms["window_codes"], terms["chunk_codes"], terms["lookahead_codes"]) == (28, 25, 3)
    assert len(terms["t_span"]) == terms["n_timesteps"] + 1 and terms["t_span"][0] == 0.0
    assert terms["t_span"][-1] == pytest.approx(1.0)
    assert terms["noise_file"] == "token2wav_noise.npy" and terms["sample_rate"] == 24000


def test_fp32_graphs_match_the_torch_reference(omni):
    for part in GRAPHS + ["token2wav_stream"]:
        row = _row(omni.rows, part, "fp32")
        assert row["max_abs_err"] < 1e-4, row
        assert row["passed"], row


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_reduced_precisions_stay_within_their_tolerance(omni, precision):
    metric, limit = TOLERANCES[precision]
    for part in GRAPHS + ["token2wav_stream"]:
        row = _row(omni.rows, part, precision)
        assert row["metric"] == metric and row["tolerance"] == limit
        assert row["passed"], row
        # Reduced precision is measurably coarser than FP32, never better (streams: compare waveforms).
        coarse = row.get("wave_mean_abs_err", row["mean_abs_err"])
        assert coarse > _row(omni.rows, part, "fp32")["mean_abs_err"], row


def test_int8_is_coarser_than_fp16_for_the_encoders(omni):
    for part in ("vision", "audio"):
        assert _row(omni.rows, part, "int8")["rel_mean_err"] > _row(omni.rows, part, "fp16")["rel_mean_err"]


def test_fp16_graphs_stream_speech_with_runtime_noise(omni):
    """What a runtime does: the bundle's graphs, its contract and noise file, NumPy vocoder noise."""
    from export.onnx import token2wav_parts
    from export.onnx.probes import stream_inputs
    from export.onnx.session import open_session, runner
    from export.torch_ref.token2wav_ref import split_windows

    entry = next(e for e in omni.entries if e["name"] == "token2wav_step" and e["precision"] == "fp16")
    terms = entry["contract"]
    runners = {g: runner(open_session(omni.out / f"{g}.fp16.onnx")) for g in token2wav_parts.GRAPHS}
    inputs, codes = stream_inputs(seed=4, codes=60)
    waves = []
    for _ in range(2):
        stream = token2wav_parts.graph_stream(runners, terms, np.load(omni.out / terms["noise_file"]), seed=9)
        stream.setup(inputs.prompt_tokens, inputs.prompt_mel, inputs.spk_embedding)
        waves.append(np.concatenate([stream.push(w, last) for w, last in split_windows(codes)]))
    assert len(waves[0]) == len(codes) * terms["mel_per_code"] * terms["samples_per_mel"]  # 24 kHz, 25 codes/s
    assert np.isfinite(waves[0]).all() and 0 < np.abs(waves[0]).max() < 1
    assert np.array_equal(waves[0], waves[1])  # a fixed seed streams the same audio


def test_verify_catches_a_changed_weight(omni, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(omni.out, bundle)
    path = bundle / "audio.fp32.onnx"
    model = onnx.load(str(path))
    weight = max(model.graph.initializer, key=lambda t: int(np.prod(t.dims)))
    values = numpy_helper.to_array(weight).copy()
    values.flat[0] += 0.5
    weight.CopyFrom(numpy_helper.from_array(values, weight.name))
    onnx.save(model, str(path))
    rows = verify_onnx_parts(bundle, omni.tensors.__getitem__, omni.config, parts={"audio"})
    assert not _row(rows, "audio", "fp32")["passed"]
    assert _row(rows, "audio", "fp16")["passed"]


def test_missing_graph_is_reported_not_raised(omni, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    rows = verify_onnx_parts(bundle, omni.tensors.__getitem__, omni.config, parts={"vision"})
    assert rows == [{"part": "vision", "precision": "-", "passed": False, "error": f"no vision.<precision>.onnx in {bundle}"}]


def test_audio_variant_has_no_vision_graph(tmp_path):
    config, tensors = media("audio", seed=2)
    assert not any(name.startswith(("vpm.", "resampler.")) for name in tensors)
    entries = build_onnx_parts(tensors.__getitem__, config, tmp_path, ["FP32"], progress=False)
    assert [(e["name"], e["precision"]) for e in entries] == [("audio", "fp32")]


def test_bad_inputs_get_one_sentence(tmp_path):
    config, tensors = media("audio", seed=2)
    with pytest.raises(ExportError, match="Unknown ONNX precision int4: use fp32, fp16 or int8."):
        build_onnx_parts(tensors.__getitem__, config, tmp_path, ["int4"], progress=False)
    missing = dict(tensors)
    del missing["apm.layers.1.fc2.weight"]

    def get(name):
        if name not in missing:
            raise KeyError(name)
        return missing[name]

    with pytest.raises(ExportError, match=r"no tensor apm\.layers\.1\.fc2\.weight"):
        build_onnx_parts(get, config, tmp_path, ["fp32"], progress=False)
    wrong = dict(tensors, **{"apm.conv1.weight": np.zeros((3, 3), np.float32)})
    with pytest.raises(ExportError, match=r"apm\.conv1\.weight has shape \(3, 3\)"):
        build_onnx_parts(wrong.__getitem__, config, tmp_path, ["fp32"], progress=False)
    with pytest.raises(ExportError, match="Unknown variant 'video'"):
        tiny_media_config("video")
    with pytest.raises(ExportError, match="no hidden_size"):
        tiny_media_tensors("omni", {}, 0)


def test_big_graphs_keep_weights_in_a_side_file(tmp_path, monkeypatch):
    """Past protobuf's 2 GB (the real vision tower is close), weights go to <graph>.onnx.data."""
    from export.onnx import storage

    monkeypatch.setattr(storage, "LIMIT", 10_000)
    config, tensors = media("audio", seed=2)
    entries = build_onnx_parts(tensors.__getitem__, config, tmp_path, ["fp32", "fp16", "int8"], progress=False)
    by_precision = {e["precision"]: e for e in entries}
    assert by_precision["fp32"]["files"] == ["audio.fp32.onnx", "audio.fp32.onnx.data"]
    assert by_precision["fp16"]["files"] == ["audio.fp16.onnx", "audio.fp16.onnx.data"]
    assert by_precision["fp32"]["bytes"] == sum((tmp_path / f).stat().st_size for f in by_precision["fp32"]["files"])
    assert (tmp_path / "audio.fp32.onnx").stat().st_size * 4 < (tmp_path / "audio.fp32.onnx.data").stat().st_size
    rows = verify_onnx_parts(tmp_path, tensors.__getitem__, config)
    assert [r["precision"] for r in rows] == ["fp32", "fp16", "int8"] and all(r["passed"] for r in rows), rows
