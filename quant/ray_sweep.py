"""`venus-quant sweep --ray ADDRESS`: every candidate a Ray task, every board kind in the cluster timing each model.

The reference runs once, here; its figures (and the reference GGUF itself,
unless --shared says every node sees the same paths) reach the tasks through
the object store. Rows are written to the sweep directory as they arrive, so a
re-run measures only what is missing. A task lost with its node is run again
by Ray on another node; a candidate whose measuring process crashed is tried
again on a node it has not crashed on; after that its row says why.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from quant.ray_tasks import quality_task, reference_files, speed_task
from quant.state import SweepError, row_key

SPEED_KEYS = ("prefill_tps", "decode_tps", "load_s", "peak_mb")
CHECK_S = 2.0  # how often the boards present are checked while waiting


def board_key(name: str, board: str) -> str:
    return f"{name}@{board}"


@dataclass
class Task:
    kind: str  # "quality" or "speed"
    key: str  # the row key
    spec: dict
    board: str = ""
    model_ref: object = None  # quality: the model's object (return_model); speed: the model it times
    tried: list[str] = field(default_factory=list)  # nodes where the measuring process crashed
    submitted: float = 0.0


def connect(address: str):
    try:
        import ray
    except ImportError:
        raise SweepError("--ray needs Ray on this machine: pip install 'venus-edge[quant]'") from None
    if not ray.is_initialized():
        _reachable(address)
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise SweepError(f"cannot join the Ray cluster at {address} ({first}); start one with "
                             "`ray start --head` and give its address") from None
    return ray


def _reachable(address: str) -> None:
    """A HOST:PORT nobody answers on fails here in one sentence (Ray itself would keep retrying for minutes)."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise SweepError(f"nothing answers at {address} ({e.strerror or e}); start the head there with "
                         "`ray start --head` or give its address") from None


def _alive_boards(ray) -> set[str]:
    from export.plan import DEVICES

    return {r for n in ray.nodes() if n.get("Alive") for r in n.get("Resources", {}) if r in DEVICES}


def choose_boards(ray, wanted: str) -> list[str]:
    """Board kinds to time on: every one present (auto), none, or the ones named (each must be known and present)."""
    from export.plan import DEVICES

    present = _alive_boards(ray)
    if wanted == "auto":
        return sorted(present)
    if wanted == "none":
        return []
    names = [b.strip() for b in wanted.split(",") if b.strip()]
    for b in names:
        if b not in DEVICES:
            raise SweepError(f"unknown board {b!r}; choose from {', '.join(DEVICES)}")
        if b not in present:
            raise SweepError(f"no node of the cluster has the board resource {b}; start it there with "
                             f"ray start --address ... --resources '{{\"{b}\": 1}}'")
    return names


class RaySweep:
    def __init__(self, sweep, bar) -> None:
        self.sweep, self.bar, self.opts = sweep, bar, sweep.opts
        self.ray = connect(self.opts.ray)
        self.boards = choose_boards(self.ray, self.opts.boards)
        self._check_threads()
        ref = sweep.src.reference
        self.ref_name = f"{sweep.src.fingerprint}-{ref.name}"
        # the reference GGUF read in place from shared memory by every task on a node, or its shared path
        self.reference = str(ref.resolve()) if self.opts.shared else \
            self.ray.put(np.fromfile(ref, dtype=np.uint8))
        self.files = self.ray.put(reference_files(sweep.ref_dir, sweep.stream_path))
        self.pending: dict[object, Task] = {}
        self.log = open(sweep.out / "ray-tasks.jsonl", "a")
        self._quality_fn = self.ray.remote(quality_task)  # made once: each ray.remote() exports the function anew
        self._speed_fn = self.ray.remote(speed_task)

    def _check_threads(self) -> None:
        most = max((n["Resources"].get("CPU", 0) for n in self.ray.nodes() if n.get("Alive")), default=0)
        if most < self.opts.n_threads:
            raise SweepError(f"no node of the cluster has {self.opts.n_threads} CPUs for --threads "
                             f"{self.opts.n_threads} (the largest has {most:g}); lower --threads")

    def _spec(self, name: str, imx: bool, measure: bool = True) -> dict:
        o, s = self.opts, self.sweep
        return {"type": name, "imatrix": imx, "text": o.text, "reference_name": self.ref_name, "measure": measure,
                "return_model": bool(self.boards) or o.keep_models,
                "measuring": {"max_tokens": o.max_tokens, "n_ctx": s.n_ctx, "n_threads": o.n_threads,
                              "n_gpu_layers": o.n_gpu_layers, "decode_tokens": o.decode_tokens,
                              "repeats": o.repeats, "use_mmap": o.use_mmap}}

    # -- submitting ------------------------------------------------------------------------------------------------
    def _quality(self, task: Task, avoid: list[str] = ()) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options = {"num_cpus": self.opts.n_threads, "num_returns": 2, "max_retries": self.opts.retries}
        other = [n["NodeID"] for n in self.ray.nodes() if n.get("Alive") and n["NodeID"] not in avoid
                 and n["Resources"].get("CPU", 0) >= self.opts.n_threads]
        if avoid and other:  # soft: if that node leaves too, any node will do
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(other[0], soft=True)
        imatrix = self.imatrix if task.spec["imatrix"] else None
        row_ref, model_ref = self._quality_fn.options(**options).remote(
            self.reference, self.files, imatrix, task.spec)
        task.model_ref, task.submitted = model_ref, time.time()
        self.pending[row_ref] = task

    def _speed(self, key: str, name: str, imx: bool, model_ref, board: str) -> None:
        task = Task("speed", key, self._spec(name, imx), board, model_ref, submitted=time.time())
        ref = self._speed_fn.options(num_cpus=0, resources={board: 1}, max_retries=self.opts.retries
                                                  ).remote(model_ref, self.files, task.spec)
        self.pending[ref] = task
        self.bar.total += 1
        self.bar.refresh()

    def _missing_boards(self, row: dict) -> list[str]:
        return [b for b in self.boards if board_key("decode_tps", b) not in row]

    def run(self, plan) -> None:
        sweep, state = self.sweep, self.sweep.state
        todo = []
        for t, imx in plan:
            key = row_key(t.name, imx)
            if state.done(key):
                row = state.rows[key]
                if row.get("status") == "ok" and self._missing_boards(row):
                    todo.append((t, imx, False))  # quality kept; the model is made again for the new boards
                else:
                    self.bar.update(1)
                continue
            skipped = sweep.higher_than_reference(t, imx)
            if skipped:
                state.add(skipped)
                self.bar.update(1)
                continue
            todo.append((t, imx, True))
        self.imatrix = self.ray.put(sweep.imatrix()) if any(imx and m for _, imx, m in todo) else None
        for t, imx, measure in todo:
            self._quality(Task("quality", row_key(t.name, imx), self._spec(t.name, imx, measure)))
        ref_key = row_key(sweep.src.reference_type, False)
        for b in self._missing_boards(state.rows[ref_key]) if self.boards else []:
            self._speed(ref_key, sweep.src.reference_type, False, self.reference, b)
        try:
            self._wait()
        finally:
            self.log.close()

    # -- collecting ------------------------------------------------------------------------------------------------
    def _wait(self) -> None:
        checked = time.monotonic()
        while self.pending:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=CHECK_S)
            for ref in ready:
                task = self.pending.pop(ref)
                try:
                    row = self.ray.get(ref)
                except self.ray.exceptions.RayError as e:
                    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                    row = {"type": task.spec["type"], "imatrix": task.spec["imatrix"], "status": "failed",
                           "error": f"the Ray task was lost {self.opts.retries + 1} times; last: {first}"}
                self._log(task, row)
                (self._got_quality if task.kind == "quality" else self._got_speed)(task, row)
            if time.monotonic() - checked >= CHECK_S:
                checked = time.monotonic()
                self._drop_gone_boards()

    def _log(self, task: Task, row: dict) -> None:
        self.log.write(json.dumps({"kind": task.kind, "key": task.key, "board": task.board,
                                   "node_id": row.get("node_id"), "submitted": task.submitted,
                                   "start": row.get("task_start"), "end": row.get("task_end"),
                                   "received": time.time(), "status": row.get("status")}) + "\n")
        self.log.flush()

    def _got_quality(self, task: Task, row: dict) -> None:
        state, key = self.sweep.state, task.key
        for k in ("task_start", "task_end"):
            row.pop(k, None)
        if row.pop("crashed", False) and len(task.tried) < self.opts.retries:
            task.tried.append(row.get("node_id", ""))
            self._quality(task, avoid=task.tried)  # llama.cpp crashed there: another node may not crash
            return
        if task.tried:
            row["tried_on"] = task.tried + [row.get("node_id", "")]
        if not task.spec["measure"]:  # quality was kept from an earlier run; only the boards were missing
            row = state.rows[key]
        elif row.get("status") == "ok":
            name = key.replace("+", "-") + ".gguf"
            row["file"] = os.path.relpath(self.sweep.models / name, self.sweep.out)
            if self.opts.keep_models:
                self.ray.get(task.model_ref).tofile(self.sweep.models / name)
        state.add(row)
        self.bar.update(1)
        if row.get("status") == "ok":
            for b in self._missing_boards(row):
                self._speed(key, task.spec["type"], task.spec["imatrix"], task.model_ref, b)

    def _got_speed(self, task: Task, got: dict) -> None:
        state = self.sweep.state
        row = dict(state.rows[task.key])
        if got.get("status") == "ok":
            row.update({board_key(k, task.board): got[k] for k in SPEED_KEYS})
        else:
            row[board_key("error", task.board)] = got.get("error", "failed")
        state.add(row)
        self.bar.update(1)

    def _drop_gone_boards(self) -> None:
        """A board that left the cluster never takes its waiting tasks: they are reported, not waited for."""
        alive = _alive_boards(self.ray)
        for ref, task in list(self.pending.items()):
            if task.kind == "speed" and task.board not in alive:
                self.ray.cancel(ref, force=True)
                del self.pending[ref]
                self._got_speed(task, {"status": "failed",
                                       "error": f"board {task.board} left the cluster before it timed this model"})


def run_on_ray(sweep, plan, bar) -> None:
    RaySweep(sweep, bar).run(plan)


def encoder_rows_on_ray(sweep, precisions: list[str]) -> list[dict] | None:
    """With --ray --shared: each encoder part (audio, vision) a Ray task over the shared paths; rows in part order.
    None when the rows are to be made here (no --shared: the graphs and media are not copied through Ray)."""
    if sweep.opts.ray is None or not sweep.opts.shared or not sweep.src.encoders:
        return None
    from quant.encoder_sweep import PRECISIONS
    from quant.media_stream import best_graph
    from quant.ray_tasks import encoder_task

    bad = [p for p in precisions if p not in PRECISIONS]
    if bad:
        raise ValueError(f"unknown encoder precision {bad[0]!r}; choose from {', '.join(PRECISIONS)}")
    ray = connect(sweep.opts.ray)
    parts = sweep.src.encoders
    media = {p: g for p, g in ((p, best_graph(f)) for p, f in parts.items()) if g is not None}
    task = ray.remote(encoder_task).options(num_cpus=sweep.opts.n_threads, max_retries=sweep.opts.retries)
    refs = [task.remote(part, files, precisions, sweep.src.reference, sweep.out / "encoders",
                        threads=sweep.opts.n_threads, raw_stream=sweep.raw_stream if sweep.opts.journal else None,
                        media=media, n_ctx=sweep.n_ctx, config=sweep.src.config)
            for part, files in sorted(parts.items())]
    rows = []
    for (part, _), ref in zip(sorted(parts.items()), refs):
        try:
            rows += ray.get(ref)
        except ray.exceptions.RayError as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            rows += [{"part": part, "precision": p, "status": "failed",
                      "error": f"the Ray task was lost {sweep.opts.retries + 1} times; last: {first}"}
                     for p in precisions]
    return rows
