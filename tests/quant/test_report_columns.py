"""The report explains its columns (units, what is compared with what, which figures mean nothing here), and the
plot's legend names only the kinds of point drawn."""
from __future__ import annotations

import json

from quant.plot import legend_entries


def test_report_explains_the_columns_and_flags_chance_perplexity(sweep):
    md = (sweep[0] / "report.md").read_text()
    assert "## What the columns mean" in md
    assert "in nats" in md and "megabytes" in md and "per second" in md
    assert "Agreement with the reference, not correctness" in md
    ref = next(r for r in json.loads((sweep[0] / "results.json").read_text())["rows"] if r.get("reference"))
    # the tiny test model has random weights: its perplexity is beyond a tenth of its vocabulary
    assert ref["ppl"] > ref["n_vocab"] / 10
    assert "PPL means nothing here" in md


def test_legend_says_with_imatrix_only_when_one_was_used(sweep):
    rows = json.loads((sweep[0] / "results.json").read_text())["rows"]
    texts = [t for _, _, t in legend_entries(rows)]
    assert not any("with imatrix" in t for t in texts) and "reference" in texts
    with_imx = rows + [{**rows[1], "imatrix": True}]
    assert any("with imatrix" in t for _, _, t in legend_entries(with_imx))
