"""A whole sweep on a tiny model: rows, ordering, reports, plot, verdict line."""
from __future__ import annotations

import csv
import json

import matplotlib.pyplot as plt

from quant_helpers import SWEEP_TYPES


def _rows(out):
    with open(out / "sweep.csv") as f:
        return {r["type"] + ("+imatrix" if r["imatrix"] == "True" else ""): r for r in csv.DictReader(f)}


def test_csv_has_every_type(sweep):
    out, _ = sweep
    rows = _rows(out)
    assert set(rows) == set(SWEEP_TYPES.split(","))
    assert all(r["status"] == "ok" for r in rows.values()), {k: r["error"] for k, r in rows.items()}
    sizes = [float(rows[t]["size_mb"]) for t in SWEEP_TYPES.split(",")]
    assert sizes == sorted(sizes, reverse=True)  # each type smaller than the one before


def test_quality_ordering(sweep):
    out, _ = sweep
    rows = _rows(out)
    q8, q4 = rows["Q8_0"], rows["Q4_K_M"]
    assert float(rows["F16"]["kl_mean"]) == 0.0 and float(rows["F16"]["top1"]) == 1.0
    assert float(q8["kl_mean"]) < float(q4["kl_mean"])
    assert float(q8["top1"]) > float(q4["top1"])
    assert 0 < float(q8["kl_mean"]) < 0.01  # Q8_0 is close but not identical
    for r in rows.values():
        assert float(r["prefill_tps"]) > 0 and float(r["decode_tps"]) > 0 and float(r["peak_mb"]) > 0


def test_decisions_come_from_the_journal(sweep):
    out, _ = sweep
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["stream_source"].startswith("journal s.journal")
    ref = next(r for r in data["rows"] if r.get("reference"))
    assert ref["n_chunks"] == 9 and ref["decision_agree"] == 1.0
    for r in data["rows"]:
        assert 0.0 <= r["decision_agree"] <= 1.0 and 0.0 <= r["delegate_agree"] <= 1.0


def test_reports_and_verdict(sweep):
    out, stdout = sweep
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("best under ") and " kl " in last and " top1 " in last and last.endswith(" tok/s")
    data = json.loads((out / "results.json").read_text())
    assert data["best"] in last
    md = (out / "report.md").read_text()
    assert "| Q4_K_M |" in md and last in md


def test_plot_is_a_png(sweep):
    out, _ = sweep
    png = out / "pareto.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = plt.imread(png)
    assert img.shape[0] > 200 and img.shape[1] > 400


def test_report_command_reprints_with_another_budget(sweep):
    from quant_helpers import run_cli

    rc, out, _ = run_cli("report", str(sweep[0]), "--budget", "1.5MB")
    assert rc == 0
    # Q8_0 (1.84 MB) is over the budget; Q6_K (1.42 MB) is the closest to F16 under it
    assert out.strip().splitlines()[-1].startswith("best under 1.50 MB: Q6_K kl ")
