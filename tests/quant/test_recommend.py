"""`venus-quant recommend`: a sweep's quality joined with the planner's memory figures."""
from __future__ import annotations

from conftest import run_cli
from quant.recommend import recommend


def test_best_is_the_closest_precision_that_fits(sweep):
    rec = recommend(sweep[0], "orin-agx-64", "omni", 4096, "fp16")
    assert rec.best is not None and rec.best.fit.fits
    pool = [c for c in rec.candidates if c.fit.fits and c.fit.realtime] or [c for c in rec.candidates if c.fit.fits]
    assert rec.best.quality_loss == min(c.quality_loss for c in pool)
    small = recommend(sweep[0], "orin-nx-16", "audio", 4096, "fp16")
    # less memory: the choice can only move to a smaller (lossier or equal) precision
    assert small.best is None or small.best.fit.parts_gb["llm"] <= rec.best.fit.parts_gb["llm"]


def test_recommend_cli_names_type_and_figures(sweep):
    rc, out, _ = run_cli("recommend", str(sweep[0]), "--device", "orin-agx-64", "--variant", "audio")
    assert rc == 0
    last = out.strip().splitlines()[-1]
    assert last.startswith("recommend ") and " kl " in last and "decode ceiling" in last


def test_nothing_fits_says_so(sweep):
    rc, out, _ = run_cli("recommend", str(sweep[0]), "--device", "orin-nano-4", "--variant", "omni")
    assert rc == 1 and "nothing in this sweep fits orin-nano-4" in out


def test_bad_device_is_one_sentence(sweep):
    rc, _, err = run_cli("recommend", str(sweep[0]), "--device", "toaster")
    assert rc == 2 and "unknown device 'toaster'" in err and len(err.strip().splitlines()) == 1
