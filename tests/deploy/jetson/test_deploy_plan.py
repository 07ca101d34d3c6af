"""The planner (export/plan.py) and the board profiles, against budgets worked by hand."""
from __future__ import annotations

import sys

import pytest

from deploy_support import REPO, run
from export import plan as P



def test_qwen3_8b_parameter_count_by_hand() -> None:
    # embeddings: 151,748 x 4096 = 621,559,808, twice (token table and the untied lm_head)
    # per layer: q 4096x4096 = 16,777,216; k, v 4096x1024 = 4,194,304 each; o 16,777,216
    #            MLP 3 x 4096 x 12288 = 150,994,944  -> 192,937,984 in matrices
    #            norms 2 x 4096 + q/k norms 2 x 128 = 8,448
    # 36 layers: 6,945,767,424 + 304,128; final norm 4,096
    p = P.Qwen3Shape().params()
    assert p.matrix == 36 * 192_937_984 + 2 * 621_559_808 == 8_188_887_040
    assert p.vector == 36 * 8_448 + 4_096 == 308_224
    assert p.matrix + p.vector == 8_189_195_264  # "Qwen3-8B": 8.19 billion


def test_kv_cache_bytes_by_hand() -> None:
    # 2 (K and V) x 36 layers x 8 KV heads x 128 dims x 2 bytes = 147,456 bytes per token
    s = P.Qwen3Shape()
    assert s.kv_bytes_per_token("f16") == 147_456
    # q8_0: 34 bytes per 32 values -> 147,456 / 2 x 34 / 32 = 78,336
    assert s.kv_bytes_per_token("q8_0") == 78_336
    r = P.plan_fit("orin-agx-64", "audio", "Q4_K_M", "fp16", 4096)
    tts_kv = 2 * 20 * 768 * 2 * 1024  # 62,914,560: the TTS's own cache for one turn
    assert r.parts_gb["kv_cache"] == pytest.approx((147_456 * 4096 + tts_kv) / 1e9, abs=1e-3)  # 0.667 GB


def test_context_is_padded_like_llama_cpp() -> None:
    assert P.padded_context(4000) == 4096 and P.padded_context(4096) == 4096 and P.padded_context(257) == 512
    with pytest.raises(ValueError, match="too small"):
        P.padded_context(100)


def test_llm_size_and_decode_ceiling_on_agx_by_hand() -> None:
    # Q4_K_M at 4.8944 bits (llama.cpp's figure for a whole 8B model):
    # 8,188,887,040 x 4.8944 / 8 = 5,009,961,091 + 308,224 x 4 (fp32 norms) = 5,011,193,987
    r = P.plan_fit("orin-agx-64", "omni", "Q4_K_M", "fp16", 4096)
    assert r.parts_gb["llm"] == pytest.approx(5.011, abs=1e-3)
    # read per token: all of it but the token table (621,559,808 x 4.8944/8 = 380,270,291)
    # plus the full f16 cache at 4096 tokens (603,979,776): 5,234,903,473 bytes
    # 204.8e9 / 5,234,903,473 = 39.12 tok/s (REFERENCE: ~38 for a 5.45 GB "9B" Q4_K_M)
    assert r.decode_ceiling_tps == pytest.approx(39.1, abs=0.05)
    nano = P.plan_fit("orin-nano-8", "audio", "Q4_K_M", "fp16", 4096)
    assert nano.decode_ceiling_tps == pytest.approx(68e9 / 5_234_903_473, abs=0.05)  # 13.0 tok/s


def test_usable_memory_and_headroom_on_orin_nano_8_by_hand() -> None:
    # 7.4 GiB seen by the kernel = 7,945,689,498 bytes; minus 1.0 GB for the OS = 6.946 GB usable
    # headroom: max(0.5 GB, 10 % of usable) = 0.695 GB
    r = P.plan_fit("orin-nano-8", "audio", "Q2_K", "int8", 2048, kv_type="q8_0", tts_type="Q4_K_M")
    assert r.usable_gb == pytest.approx(6.946, abs=1e-3)
    assert r.headroom_gb == pytest.approx(0.695, abs=1e-3)
    assert r.fits and r.free_gb == pytest.approx(r.usable_gb - r.total_gb - r.headroom_gb, abs=2e-3)


def test_audio_encoder_and_token2wav_by_hand() -> None:
    r = P.plan_fit("orin-agx-64", "audio", "Q8_0", "fp16", 2048)
    # Whisper-medium encoder: 24 x (4 x 1024^2 + 2 x 1024 x 4096) = 301,989,888 in layer matrices,
    # convs 80x1024x3 + 1024x1024x3 = 3,391,488, positions 1500 x 1024 = 1,536,000,
    # projector 1024x4096 + 4096x4096 = 20,971,520 -> 327,888,896 matrix params, x 2 bytes = 0.656 GB
    assert P.audio_params().matrix == 327_888_896
    assert r.parts_gb["audio"] == pytest.approx(0.657, abs=2e-3)
    # token2wav: flow 595 MB fp32 -> 297.5 MB fp16, HiFT kept at 80 MB fp32
    assert r.parts_gb["token2wav"] == pytest.approx(0.3775, abs=1e-3)
    assert r.parts_gb["vision"] == 0.0  # the Audio variant loads no vision tower


def test_full_f16_model_matches_the_reported_20_gb() -> None:
    r = P.plan_fit("orin-agx-64", "omni", "F16", "fp16", 4096, tts_type="F16")
    weights = sum(r.parts_gb[k] for k in ("llm", "vision", "audio", "tts", "token2wav"))
    assert 19.0 < weights < 20.5  # REFERENCE: "full model memory about 20 GB F16"


def test_lower_precision_and_shorter_context_cost_less() -> None:
    totals = [P.plan_fit("orin-nx-16", "omni", t, "fp16", 4096).total_gb for t in P.LLM_BITS]
    assert totals == sorted(totals, reverse=True)
    kv = [P.plan_fit("orin-nx-16", "omni", "Q4_K_M", "fp16", c).parts_gb["kv_cache"] for c in (2048, 4096, 8192)]
    assert kv[0] < kv[1] < kv[2]


def test_discrete_card_does_not_count_host_processes() -> None:
    r = P.plan_fit("rtx-4090", "omni", "Q8_0", "fp16", 8192)
    assert r.parts_gb["processes"] == 0.0 and r.parts_gb["cuda"] > 0
    assert P.plan_fit("cpu", "audio", "Q4_K_M", "fp16", 4096).parts_gb["cuda"] == 0.0


@pytest.mark.parametrize("kwargs, words", [
    (dict(device_name="orin-tx2"), "unknown device 'orin-tx2'; choose from orin-agx-64"),
    (dict(llm_type="Q4_K"), "unknown GGUF type 'Q4_K'"),
    (dict(encoder_precision="fp8"), "unknown encoder precision 'fp8'"),
    (dict(variant="video"), "unknown variant 'video'"),
    (dict(kv_type="q2"), "unknown KV cache type 'q2'"),
])
def test_bad_input_gets_one_sentence(kwargs, words) -> None:
    args = dict(device_name="orin-nx-16", variant="omni", llm_type="Q4_K_M", encoder_precision="fp16", context=4096)
    args.update(kwargs)
    kv = args.pop("kv_type", "f16")
    with pytest.raises(ValueError, match=words):
        P.plan_fit(**args, kv_type=kv)


def test_cli_table_and_exit_codes(capsys) -> None:
    assert P.main(["--device", "orin-agx-64", "--variant", "omni", "--context", "8192"]) == 0
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-2:]
    assert "Jetson AGX Orin 64GB" in out and "Q4_K_M" in out and last[0].startswith("choose ")
    assert last[1].startswith("its parts (GB): llm ") and "kv_cache" in last[1]
    assert P.main(["--device", "orin-nano-4", "--variant", "audio"]) == 1
    assert "nothing fits orin-nano-4" in capsys.readouterr().out
    assert P.main(["--device", "pi5"]) == 2
    assert "unknown device 'pi5'" in capsys.readouterr().err


def test_module_entry_point_runs() -> None:
    r = run([sys.executable, "-m", "export.plan", "--device", "orin-nx-16", "--json"],
            cwd=REPO)
    assert r.returncode == 0 and '"best"' in r.stdout


@pytest.mark.parametrize("kwargs, words", [
    (dict(tokens_per_chunk=-1), "tokens per chunk -1 is negative"),
    (dict(memory_gib=0), "is not a size"),
    (dict(frames_per_s=-0.5), "frame rate -0.5 is negative"),
])
def test_bad_settings_get_one_sentence(kwargs, words) -> None:
    with pytest.raises(ValueError, match=words):
        P.plan_fit("orin-nx-16", "omni", "Q4_K_M", "fp16", 4096, **kwargs)


def test_memory_override_changes_the_answer() -> None:
    # the same profile checked against the memory a smaller module reports
    assert P.plan_fit("orin-nx-16", "omni", "Q4_K_M", "fp16", 4096).fits
    small = P.plan_fit("orin-nx-16", "omni", "Q4_K_M", "fp16", 4096, memory_gib=7.4)
    assert not small.fits and small.usable_gb == pytest.approx(7.4 * 2**30 / 1e9 - 1.2, abs=1e-3)
