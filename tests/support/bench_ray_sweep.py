"""Bench: one sweep run locally and through a two-node loopback Ray cluster (the tests' cluster), side by side.

    unshare -n python tests/support/bench_ray_sweep.py MODEL --types F16,Q8_0,Q6_K,Q4_K_M,IQ4_XS [sweep options]

Both sweeps get the same inputs and options. The cluster (a head and a worker, one CPU each) is started first, so
that the local sweep runs beside the same idle Ray processes. It prints each wall time, the Ray sweep's time as a
ratio of the local one, the largest KL difference between their rows, and the scheduling overhead per task.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ray_cluster  # noqa: E402


def _overhead(tasks: list[dict]) -> list[float]:
    free, out = {}, []
    for t in sorted(tasks, key=lambda t: t["start"]):
        q = (t["node_id"], t["kind"])
        out.append(t["start"] - max(t["submitted"], free.get(q, 0.0)) + t["received"] - t["end"])
        free[q] = t["end"]
    return out


def main(argv: list[str]) -> int:
    d = Path(tempfile.mkdtemp(prefix="vq-bench-"))
    base = ["sweep", *argv, "--no-progress"]
    plan = {"result": str(d / "result.json"),
            "runs": [{"args": base + ["-o", str(d / "local")]},
                     {"args": base + ["--ray", f"127.0.0.1:{ray_cluster.PORT}", "--boards", "none",
                                      "-o", str(d / "ray")]}]}
    (d / "plan.json").write_text(json.dumps(plan))
    ray_cluster.main(str(d / "plan.json"))
    result = json.loads((d / "result.json").read_text())
    if "error" in result or any(r["rc"] for r in result["runs"]):
        print(json.dumps(result)[:4000], file=sys.stderr)
        return 1
    local, ray = (r["seconds"] for r in result["runs"])
    rows = [{r["type"]: r for r in json.loads((d / n / "results.json").read_text())["rows"]} for n in ("local", "ray")]
    kl = max(abs(rows[0][k]["kl_mean"] - rows[1][k]["kl_mean"]) for k in rows[0])
    over = _overhead([json.loads(x) for x in (d / "ray" / "ray-tasks.jsonl").read_text().splitlines()])
    print(f"rows {len(rows[0])}  local sweep {local:.1f} s  ray sweep (2 nodes x 1 CPU) {ray:.1f} s  "
          f"ray/local {ray / local:.2f}  cluster start {result['cluster_s']:.1f} s")
    print(f"max |KL mean difference| {kl:.2e}  scheduling overhead per task: mean {sum(over) / len(over):.2f} s, "
          f"max {max(over):.2f} s over {len(over)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
