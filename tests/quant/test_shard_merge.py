"""A sweep split by hand (--shard i/n, each a machine of its own) and joined with `venus-quant merge` gives the rows,
order and files of one local sweep."""
from __future__ import annotations

import json

from quant_helpers import SWEEP_TYPES, run_cli

QUALITY = ("type", "imatrix", "status", "size_mb", "kl_mean", "kl_p99", "top1", "ppl", "decision_agree",
           "delegate_agree", "n_chunks")


def test_shards_merge_to_the_local_sweep(tiny_gguf, journal, sweep, tmp_path):
    dirs = []
    for i in (1, 2):
        d = tmp_path / f"shard{i}"
        rc, _, err = run_cli("sweep", str(tiny_gguf), "--types", SWEEP_TYPES, "--journal", str(journal),
                             "--threads", "1", "--no-progress", "--shard", f"{i}/2", "-o", str(d))
        assert rc == 0, err
        dirs.append(d)
    shares = [[r["type"] for r in json.loads((d / "results.json").read_text())["rows"]] for d in dirs]
    assert shares == [["F16", "Q8_0", "Q4_K_M"], ["F16", "Q6_K", "IQ4_XS"]]  # each shard measures its own half

    out = tmp_path / "merged"
    rc, stdout, err = run_cli("merge", *map(str, dirs), "-o", str(out))
    assert rc == 0, err
    got = json.loads((out / "results.json").read_text())["rows"]
    want = json.loads((sweep[0] / "results.json").read_text())["rows"]
    assert [[r[k] for k in QUALITY] for r in got] == [[r[k] for k in QUALITY] for r in want]
    head = (sweep[0] / "sweep.csv").read_text().splitlines()[0]
    assert (out / "sweep.csv").read_text().splitlines()[0] == head
    assert (out / "pareto.png").is_file() and "| Q4_K_M |" in (out / "report.md").read_text()
    assert stdout.strip().splitlines()[-1].split(" decode ")[0] == sweep[1].strip().splitlines()[-1].split(" decode ")[0]
    rc, out_text, _ = run_cli("report", str(out))  # the merged folder reads as any sweep
    assert rc == 0 and "Q6_K" in out_text


def test_merge_refuses_shards_of_different_sweeps(tiny_gguf, sweep, tmp_path):
    d = tmp_path / "other"
    rc, _, err = run_cli("sweep", str(tiny_gguf), "--types", "F16,Q8_0", "--threads", "1", "--no-progress",
                         "--max-tokens", "64", "--shard", "1/2", "-o", str(d))
    assert rc == 0, err
    rc, _, err = run_cli("merge", str(sweep[0]), str(d), "-o", str(tmp_path / "m"))
    assert rc == 2 and "merge only shards of one sweep" in err and "Traceback" not in err
    rc, _, err = run_cli("merge", str(tmp_path / "nothing"), "-o", str(tmp_path / "m2"))
    assert rc == 2 and "holds no results.json" in err
