"""`venus-quant recommend`: a sweep's quality joined with the planner's memory figures."""
from __future__ import annotations

from quant_helpers import run_cli
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


def test_negligible_encoder_loss_buys_memory(tmp_path):
    import json

    rows = [{"type": t, "status": "ok", "kl_mean": kl, "top1": 1 - kl, "size_mb": mb, "decode_tps": 10.0}
            for t, kl, mb in (("F16", 0.0, 16), ("Q8_0", 0.001, 8.5), ("Q4_K_M", 0.05, 4.9))]
    enc = [{"part": "audio", "precision": p, "status": "ok", "llm_kl": kl}
           for p, kl in (("fp32", 0.0), ("fp16", 1e-6), ("int8", 0.3))]
    (tmp_path / "results.json").write_text(json.dumps({"rows": rows, "encoders": enc, "budget_mb": 8}))
    rec = recommend(tmp_path, "orin-agx-64", "audio", 4096)
    assert rec.best.encoder == "fp16"  # fp32 is no better by more than NEGLIGIBLE_KL; int8 costs 0.3 nats
    fitting = [c for c in rec.candidates if c.fit.fits and c.fit.realtime]
    assert rec.best.row["type"] == min(fitting, key=lambda c: c.quality_loss).row["type"]
