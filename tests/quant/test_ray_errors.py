"""--ray and --shard mistakes, each said in one sentence before anything is measured."""
from __future__ import annotations

import pytest

from quant_helpers import run_cli


def test_an_unreachable_cluster_is_said_before_the_reference_runs(tiny_gguf, tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "s"
    # port 1 on loopback: nothing listens there, and nothing leaves 127.0.0.1
    rc, _, err = run_cli("sweep", str(tiny_gguf), "--types", "Q8_0", "--threads", "1", "--no-progress",
                         "--ray", "127.0.0.1:1", "-o", str(out))
    assert rc == 2 and "nothing answers at 127.0.0.1:1" in err and "Traceback" not in err
    assert not (out / "rows.jsonl").is_file()  # the reference was not measured first


@pytest.mark.parametrize("args, says", [
    (["--shard", "3/2"], "--shard 3/2: I must be from 1 to N"),
    (["--shard", "half"], "cannot read --shard 'half'"),
    (["--shard", "1/2", "--ray", "127.0.0.1:1"], "give --ray or --shard, not both"),
    (["--retries", "-1", "--ray", "127.0.0.1:1"], "--retries cannot be negative"),
])
def test_shard_and_ray_options_are_checked(tiny_gguf, tmp_path, args, says):
    rc, _, err = run_cli("sweep", str(tiny_gguf), "--no-progress", "-o", str(tmp_path / "s"), *args)
    assert rc == 2 and says in err and "Traceback" not in err
