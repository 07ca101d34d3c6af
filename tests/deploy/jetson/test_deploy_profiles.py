"""Board profiles: generated from the planner, committed in sync, and refused when they do not fit."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from deploy_support import load_jetson, JETSON, run

profiles = load_jetson("profiles")

from export import plan as P  # noqa: E402

MEMINFO = "MemTotal:       {kb} kB\nMemFree:          812340 kB\nSwapTotal:       3912720 kB\n"


def load(board: str) -> dict[str, str]:
    return profiles.read_profile(JETSON / "profiles" / f"{board}.env")


@pytest.mark.parametrize("board", profiles.BOARDS)
def test_committed_profiles_match_the_planner(board) -> None:
    """Regenerate with: python deploy/jetson/profiles.py generate deploy/jetson/profiles"""
    assert (JETSON / "profiles" / f"{board}.env").read_text() == profiles.render(board, profiles.choose(board))


@pytest.mark.parametrize("board", profiles.BOARDS)
def test_every_profile_keeps_its_own_budget(board) -> None:
    p = load(board)
    total, usable, headroom = (float(p[k]) for k in ("VENUS_PLAN_TOTAL_GB", "VENUS_PLAN_USABLE_GB",
                                                      "VENUS_PLAN_HEADROOM_GB"))
    assert (total + headroom <= usable) == (p["VENUS_PLAN_FITS"] == "yes")
    assert p["VENUS_NVPMODEL"] and p["VENUS_SWAP_GB"].isdigit()
    if p["VENUS_PLAN_FITS"] == "yes":
        assert float(p["VENUS_PLAN_CHUNK_S"]) <= P.REALTIME_SHARE  # every board that fits keeps up


def test_agx_orin_64_by_hand() -> None:
    p = load("orin-agx-64")
    assert (p["VENUS_VARIANT"], p["VENUS_CONTEXT"], p["VENUS_VISION_FPS"]) == ("omni", "8192", "1")
    # Q6_K LLM 8,188,887,040 x 6.5625/8 = 6.718 GB; f16 cache 147,456 x 8192 = 1.208 GB;
    # vision 0.98 + audio 0.66 + TTS Q8_0 0.47 + token2wav 0.38 GB; about 12 GB in all,
    # far inside 61.4 GiB - 1.5 GB = 64.4 GB. Decode reads 6.718 - 0.510 (token table) + 1.208 = 7.42 GB
    # per token: 204.8 / 7.42 = 27.6 tok/s.
    assert p["VENUS_LLM_TYPE"] == "Q6_K" and p["VENUS_KV_TYPE"] == "f16"
    assert float(p["VENUS_PLAN_TOTAL_GB"]) == pytest.approx(12.05, abs=0.05)
    assert float(p["VENUS_PLAN_DECODE_CEILING_TPS"]) == pytest.approx(27.6, abs=0.1)
    # Q8_0 would fit in memory too, but 8 tokens at its 22 tok/s ceiling (x 0.65 achieved) plus the TTS
    # and a 0.22 s frame encode exceed 80 % of the 1 s chunk: the planner steps down to Q6_K.
    q8 = P.plan_fit("orin-agx-64", "omni", "Q8_0", "fp16", 8192)
    assert q8.fits and not q8.realtime


def test_orin_nano_8_by_hand() -> None:
    p = load("orin-nano-8")
    # 6.946 GB usable (7.4 GiB - 1 GB OS). Even the Audio variant at Q4_K_M needs
    # 5.01 LLM + 0.33 audio int8 + 0.27 TTS + 0.38 token2wav + 0.22 caches + 0.45 buffers
    # + 0.70 CUDA + 0.36 processes = 7.72 GB: more than the board has, before headroom.
    q4 = P.plan_fit("orin-nano-8", "audio", "Q4_K_M", "int8", 2048, kv_type="q8_0", tts_type="Q4_K_M")
    assert not q4.fits and q4.total_gb == pytest.approx(7.72, abs=0.02)
    # Q2_K (3.24 GB) with a 4096-token q8_0 cache (0.38 GB) brings it to 6.11 GB, leaving 0.14 GB beyond
    # the 0.69 GB headroom.
    assert (p["VENUS_VARIANT"], p["VENUS_LLM_TYPE"], p["VENUS_CONTEXT"]) == ("audio", "Q2_K", "4096")
    assert float(p["VENUS_PLAN_TOTAL_GB"]) == pytest.approx(6.11, abs=0.01)
    assert "below Q4_K_M" in (JETSON / "profiles" / "orin-nano-8.env").read_text()


def test_orin_nano_4_is_refused() -> None:
    p = load("orin-nano-4")
    # 3.4 GiB - 0.8 GB = 2.85 GB usable; the smallest configuration needs 5.95 GB.
    assert p["VENUS_PLAN_FITS"] == "no" and float(p["VENUS_PLAN_USABLE_GB"]) == pytest.approx(2.85, abs=0.01)


def test_check_uses_this_machines_memory(tmp_path: Path) -> None:
    prof = JETSON / "profiles" / "orin-nx-16.env"
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO.format(kb=16_040_000))  # an Orin NX 16GB: 15.3 GiB
    r = run([sys.executable, str(JETSON / "profiles.py"), "check", str(prof), "--meminfo", str(meminfo)])
    assert r.returncode == 0 and "fits:" in r.stdout
    meminfo.write_text(MEMINFO.format(kb=7_633_000))  # the same profile on an 8 GB module
    r = run([sys.executable, str(JETSON / "profiles.py"), "check", str(prof), "--meminfo", str(meminfo)])
    assert r.returncode == 1
    assert r.stderr.startswith("venus-edge refuses to start: omni Q4_K_M")
    assert "does not fit: needs" in r.stderr and "GB short" in r.stderr


@pytest.mark.parametrize("text, words", [
    ("VENUS_BOARD=orin-nx-16\n", "profile lacks VENUS_VARIANT"),
    ("this is not a profile\n", "is not a KEY=value line"),
    ("VENUS_BOARD=orin-nx-16\nVENUS_VARIANT=omni\nVENUS_LLM_TYPE=Q4_K_M\n"
     "VENUS_ENCODER_PRECISION=fp16\nVENUS_CONTEXT=lots\n", "VENUS_CONTEXT must be a number"),
    ("VENUS_BOARD=orin-tx2\nVENUS_VARIANT=omni\nVENUS_LLM_TYPE=Q4_K_M\nVENUS_ENCODER_PRECISION=fp16\n"
     "VENUS_CONTEXT=4096\n", "unknown device 'orin-tx2'"),
])
def test_broken_profiles_get_one_sentence(tmp_path: Path, text, words) -> None:
    prof = tmp_path / "profile.env"
    prof.write_text(text)
    r = run([sys.executable, str(JETSON / "profiles.py"), "check", str(prof)])
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_missing_profile(tmp_path: Path) -> None:
    r = run([sys.executable, str(JETSON / "profiles.py"), "check", str(tmp_path / "none.env")])
    assert r.returncode == 2 and "does not exist" in r.stderr


@pytest.mark.parametrize("board", profiles.BOARDS)
def test_readme_table_matches_the_profiles(board) -> None:
    """deploy/jetson/README.md quotes the planner's figures; they must not drift from the profiles."""
    rows = [line for line in (JETSON / "README.md").read_text().splitlines() if line.startswith(f"| {board} |")]
    assert len(rows) == 1, f"README has no single table row for {board}"
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    p = load(board)
    assert cells[4].strip("()") == p["VENUS_LLM_TYPE"]
    assert (cells[5], cells[6], cells[7], cells[8]) == (p["VENUS_ENCODER_PRECISION"], p["VENUS_KV_TYPE"],
                                                        p["VENUS_TTS_TYPE"], p["VENUS_CONTEXT"])
    assert cells[10] == f"{float(p['VENUS_PLAN_TOTAL_GB']):.2f} GB"
    assert cells[11] == f"{float(p['VENUS_PLAN_USABLE_GB']):.2f} GB"
    assert cells[14] == f"{p['VENUS_PLAN_DECODE_CEILING_TPS']} tok/s"
    assert cells[16] == p["VENUS_NVPMODEL"]
