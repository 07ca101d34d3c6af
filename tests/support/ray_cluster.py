"""A real two-node Ray cluster on loopback, for the --ray tests: run as `unshare -n python ray_cluster.py PLAN.json`.

Inside a network namespace of its own with only loopback up, nothing Ray binds
is reachable from outside and no traffic leaves 127.0.0.1. The head and one
worker node get one CPU each; the worker also carries a board resource. The
plan's sweeps run through the real CLI in a subprocess; `kill` ends the worker
node (its whole process group) while one of its tasks is measuring. Every
process left in the namespace is ended at the close, by id.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PORT = 6379
BOARD = "orin-nano-8"
# a node that stops answering is declared dead after about 1.5 s instead of Ray's default of about 15
FAST_HEALTH = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "500",
               "RAY_health_check_failure_threshold": "3", "RAY_health_check_initial_delay_ms": "0"}


def _env() -> dict:
    return {**os.environ, **FAST_HEALTH, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}


def _node(temp: str, head: bool) -> subprocess.Popen:
    args = [str(Path(sys.executable).parent / "ray"), "start", "--block", "--num-cpus=1", "--node-ip-address=127.0.0.1", f"--temp-dir={temp}"]
    args += ["--head", f"--port={PORT}", "--include-dashboard=false", "--disable-usage-stats"] if head else \
        [f"--address=127.0.0.1:{PORT}", f"--resources={json.dumps({BOARD: 1})}"]
    log = open(Path(temp) / f"{'head' if head else 'worker'}.log", "w")
    return subprocess.Popen(args, env=_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _nodes(timeout: float = 90) -> dict[str, str]:
    """{"head": node id, "worker": node id} once both are alive."""
    import ray

    ray.init(address=f"127.0.0.1:{PORT}", logging_level="ERROR", log_to_driver=False)
    try:
        deadline = time.monotonic() + timeout
        while True:
            alive = [n for n in ray.nodes() if n.get("Alive")]
            if len(alive) == 2:
                return {("worker" if BOARD in n["Resources"] else "head"): n["NodeID"] for n in alive}
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster has {len(alive)} live nodes after {timeout:.0f} s")
            time.sleep(0.2)
    finally:
        ray.shutdown()


def _in_group(pid: int, pgid: int) -> bool:
    """Whether pid or one of its ancestors is in process group pgid (Ray's workers start sessions of their own)."""
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return False
        if int(stat[2]) == pgid:
            return True
        pid = int(stat[1])
    return False


def _measuring_on(pgid: int) -> bool:
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes()
            except OSError:
                continue
            if b"quant.worker" in cmd and _in_group(int(p.name), pgid):
                return True
    return False


def _sweep(args: list[str], worker: subprocess.Popen | None, kill: bool) -> dict:
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "quant.cli", *args], cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed_at = None
    while kill and proc.poll() is None and killed_at is None:
        if _measuring_on(worker.pid):  # a candidate is being measured on the worker node: end that node now
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
            killed_at = time.monotonic() - t0
        time.sleep(0.05)
    out, err = proc.communicate()
    return {"rc": proc.returncode, "stdout": out, "stderr": err, "seconds": time.monotonic() - t0,
            "killed_at": killed_at}


def _end_namespace() -> None:
    """End every other process of this network namespace (all started here), by id."""
    me, ns = os.getpid(), os.readlink("/proc/self/ns/net")
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and int(p.name) != me:
            try:
                if os.readlink(p / "ns" / "net") == ns:
                    os.kill(int(p.name), signal.SIGKILL)
            except OSError:
                pass


def main(plan_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text())
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    temp = tempfile.mkdtemp(prefix="vq-ray-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    result: dict = {"runs": []}
    try:
        t0 = time.monotonic()
        _node(temp, head=True)
        worker = _node(temp, head=False)
        result["nodes"] = _nodes()
        result["cluster_s"] = time.monotonic() - t0
        for run in plan["runs"]:
            result["runs"].append(_sweep(run["args"], worker, run.get("kill", False)))
    except Exception as e:  # reported to the test, which fails with it
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        Path(plan["result"]).write_text(json.dumps(result))
        _end_namespace()
        time.sleep(0.5)  # the ended processes close their files before the folder goes
        shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
