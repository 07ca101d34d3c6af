"""Which rows a sweep makes: types above the reference, types that need an imatrix, --imatrix both."""
from __future__ import annotations

import csv

from quant_helpers import run_cli


def test_rows_for_special_types(tiny_gguf, tmp_path):
    out = tmp_path / "s"
    rc, stdout, stderr = run_cli("sweep", str(tiny_gguf), "--types", "F32,F16,Q8_0,Q6_K,IQ2_XXS", "--imatrix", "both",
                                 "--threads", "1", "--no-progress", "--repeats", "1", "--decode-tokens", "8",
                                 "--ctx", "256", "-o", str(out))  # 256 eval tokens + 8 decoded: the context grows
    assert rc == 0, stderr
    with open(out / "sweep.csv") as f:
        rows = {r["type"] + ("+imatrix" if r["imatrix"] == "True" else ""): r for r in csv.DictReader(f)}
    # F32 is above the F16 reference; Q8_0 ignores an imatrix; IQ2_XXS cannot be made without one
    assert set(rows) == {"F32", "F16", "Q8_0", "Q6_K", "Q6_K+imatrix", "IQ2_XXS+imatrix"}
    assert rows["F32"]["status"] == "skipped" and "higher precision than the reference" in rows["F32"]["error"]
    assert all(r["status"] == "ok" for k, r in rows.items() if k != "F32")
    assert float(rows["IQ2_XXS+imatrix"]["kl_mean"]) > float(rows["Q6_K"]["kl_mean"])
    assert (out / "imatrix.npz").is_file()
    assert "computed in Python" in (out / "report.md").read_text()
    assert "F32" not in stdout.strip().splitlines()[-1]
