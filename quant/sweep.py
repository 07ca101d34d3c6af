"""The sweep: quantize to every type asked, measure each in a fresh process, compare with the reference."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm import tqdm

from edge.backends.llama import LlamaError, LlamaVocab
from export.errors import ExportError
from export.gguf_types import TYPES, GgufType, gguf_type, parse_types
from export.quantize import quantize
from quant.chunks import ChunkStream, stream_from_text, stream_positions
from quant.imatrix import compute_imatrix, load_imatrix, save_imatrix
from quant.source import Source, checkpoint_encoders, resolve
from quant.state import SweepError, SweepState, row_key
from quant.texts import CALIB_TEXT, EVAL_TEXT
from quant.measure import run_job
from quant.worker import SweepJob

IMATRIX_MODES = ("off", "on", "both")


@dataclass
class SweepOptions:
    source: str
    out: Path
    types: list[GgufType]
    imatrix: str = "off"  # off | on | both | path to an imatrix file (.npz or llama-imatrix .gguf)
    text: str = EVAL_TEXT
    calib: str = CALIB_TEXT
    journal: str | list[str] | None = None  # one runtime journal or several (each replayed from an empty context)
    max_tokens: int = 256
    max_chunks: int = 32
    n_ctx: int = 2048
    decode_tokens: int = 32
    repeats: int = 3
    use_mmap: bool = True
    n_threads: int = 1
    n_gpu_layers: int = 0
    keep_models: bool = False
    fresh: bool = False
    progress: bool = True
    encoders: list[str] = field(default_factory=list)
    shard: tuple[int, int] | None = None  # (i, n): this run measures every n-th candidate from the i-th
    ray: str | None = None  # a Ray cluster's address ("auto": the one this machine belongs to); None: this machine
    boards: str = "auto"  # board kinds to time on with --ray: auto (every one present), none, or a comma list
    shared: bool = False  # --ray: the input and -o are at the same paths on every node (no copy through Ray)
    retries: int = 1  # --ray: a task lost with its node, or crashed, runs again this many times elsewhere


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _variants(t: GgufType, mode: str) -> list[bool]:
    """Which imatrix settings to measure for one type."""
    if t.imatrix == "ignored":  # llama.cpp quantizes these without looking at an imatrix
        return [False]
    if t.needs_imatrix:
        return [True]
    return {"off": [False], "on": [True], "both": [False, True]}.get(mode, [True])


def _load_stream(opts: SweepOptions, src: Source) -> tuple[ChunkStream, ChunkStream]:
    """(the raw stream, the stream every precision replays): media embedded when the bundle has encoders."""
    if not opts.journal:
        stream = stream_from_text(opts.text, max_chunks=opts.max_chunks)
        return stream, stream
    from quant.journal_stream import stream_from_journals
    from quant.media_stream import best_graph, embed_media, llm_width

    paths = [opts.journal] if isinstance(opts.journal, str) else list(opts.journal)
    raw = stream_from_journals(paths, max_chunks=opts.max_chunks)
    audio, vision = best_graph(src.encoders.get("audio", {})), best_graph(src.encoders.get("vision", {}))
    if audio is None and vision is None:
        return raw, raw
    return raw, embed_media(raw, llm_width(src.reference), audio, vision, src.config, opts.n_threads)


class Sweep:
    def __init__(self, opts: SweepOptions) -> None:
        if opts.imatrix not in IMATRIX_MODES and not Path(opts.imatrix).is_file():
            raise SweepError(f"--imatrix {opts.imatrix!r} is neither off/on/both nor an existing imatrix file")
        self.opts = opts
        self.out = opts.out
        self.out.mkdir(parents=True, exist_ok=True)
        self.src = resolve(opts.source, self.out, progress=opts.progress)
        self.encoder_note = ""
        if (opts.encoders or opts.journal) and self.src.kind == "checkpoint":
            # a journal's recorded media reach the LLM only through the encoders, so they are built for it too
            self.encoder_note = checkpoint_encoders(self.src, self.out, opts.encoders or ["fp32"], opts.progress)
        self.raw_stream, self.stream = _load_stream(opts, self.src)
        # keys read as phrases: a resumed sweep names the one that differs
        identity = {"input": self.src.fingerprint, "evaluation text": _sha(opts.text),
                    "chunk stream": self.stream.digest(), "evaluation length": opts.max_tokens,
                    "calibration text": _sha(opts.calib),
                    # speed and memory figures are comparable only when measured the same way
                    "measuring setup": {"threads": opts.n_threads, "gpu_layers": opts.n_gpu_layers,
                                           "mmap": opts.use_mmap, "decode_tokens": opts.decode_tokens,
                                           "repeats": opts.repeats, "ctx": opts.n_ctx}}
        if opts.shard is not None:  # a directory holds one shard's rows; merge joins them
            identity["shard"] = f"{opts.shard[0]}/{opts.shard[1]}"
        if opts.imatrix not in IMATRIX_MODES:  # rows made with another imatrix file would not be comparable
            identity["imatrix file"] = hashlib.sha256(Path(opts.imatrix).read_bytes()).hexdigest()[:16]
        self.n_ctx = self._context_size()
        self._imatrix = None
        self.ref_dir = self.out / "reference"
        self.models = self.out / "models"
        self.stream_path = self.out / "stream.json"
        self.state = SweepState(self.out, identity, fresh=opts.fresh)  # last: it takes the directory's lock
        self.ref_dir.mkdir(exist_ok=True)
        self.models.mkdir(exist_ok=True)
        self.stream.save(self.stream_path)

    def _context_size(self) -> int:
        """--ctx, or more when the evaluation text or the replayed stream needs it (multiples of 256)."""
        try:
            vocab = LlamaVocab(self.src.reference)
        except LlamaError as e:
            raise SweepError(str(e)) from None
        with vocab as v:
            need = max(stream_positions(v.tokenize, self.stream),
                       min(len(v.tokenize(self.opts.text)), self.opts.max_tokens) + self.opts.decode_tokens + 1)
        return max(self.opts.n_ctx, -(-need // 256) * 256)

    def close(self) -> None:
        self.state.close()

    def __enter__(self) -> "Sweep":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the pieces --------------------------------------------------------
    def imatrix(self):
        if self._imatrix is None:
            mode = self.opts.imatrix
            path = self.out / "imatrix.npz"
            if mode not in IMATRIX_MODES:
                self._imatrix = load_imatrix(mode)
            elif path.is_file():
                self._imatrix = load_imatrix(path)
            else:
                self._imatrix = compute_imatrix(self.src.reference, self.opts.calib, n_threads=self.opts.n_threads,
                                                n_gpu_layers=self.opts.n_gpu_layers, progress=self.opts.progress)
                save_imatrix(path, self._imatrix)
        return self._imatrix

    def _measure(self, model: Path, t: GgufType, imx: bool, role: str) -> dict:
        key = row_key(t.name, imx)
        job = SweepJob(model=str(model), type=t.name, imatrix=imx, role=role, ref_dir=str(self.ref_dir),
                  text=self.opts.text, out=str(self.out / f".row-{key}.json"), stream=str(self.stream_path),
                  max_tokens=self.opts.max_tokens, n_ctx=self.n_ctx, n_threads=self.opts.n_threads,
                  n_gpu_layers=self.opts.n_gpu_layers, decode_tokens=self.opts.decode_tokens,
                  repeats=self.opts.repeats, use_mmap=self.opts.use_mmap)
        row = run_job(job, self.out / f".job-{key}.json")
        row.pop("crashed", None)  # only a cluster tries a crashed row again, elsewhere
        if row.get("status") == "ok":
            row["file"] = os.path.relpath(model, self.out) if model.is_relative_to(self.out) else str(model)
        return row

    def _run_reference(self) -> None:
        t = gguf_type(self.src.reference_type) if self.src.reference_type in TYPES else None
        if t is None or t.bpw < TYPES["Q8_0"].bpw:
            raise SweepError(f"the reference {self.src.reference.name} is {self.src.reference_type}; "
                             "a sweep needs an F32, F16, BF16 or Q8_0 reference")
        key = row_key(t.name, False)
        have = all((self.ref_dir / f).is_file() for f in ("tokens.json", "logp.npy"))
        if self.state.done(key) and have:
            return
        self.state.forget(key)
        row = self._measure(self.src.reference, t, False, "reference")
        if row.get("status") != "ok":
            raise SweepError(f"the reference {self.src.reference.name} could not be measured: {row['error']}")
        row["reference"] = True
        self.state.add(row)

    def higher_than_reference(self, t: GgufType, imx: bool) -> dict | None:
        """The skipped row of a type above the reference's precision (nothing to compare it with), else None."""
        if t.bpw > gguf_type(self.src.reference_type).bpw:
            return {"type": t.name, "imatrix": imx, "status": "skipped",
                    "error": f"higher precision than the reference ({self.src.reference_type})"}
        return None

    def _run_type(self, t: GgufType, imx: bool, bar) -> None:
        skipped = self.higher_than_reference(t, imx)
        if skipped:
            self.state.add(skipped)
            return
        dst = self.models / (row_key(t.name, imx).replace("+", "-") + ".gguf")
        try:
            if not dst.is_file():
                bar.set_postfix_str(f"{row_key(t.name, imx)}: quantizing")
                if imx and self._imatrix is None:
                    bar.set_postfix_str("computing the importance matrix")
                imatrix = self.imatrix() if imx else None
                quantize(self.src.reference, dst, t, nthread=self.opts.n_threads, imatrix=imatrix)
        except (ValueError, RuntimeError, ExportError) as e:
            self.state.add({"type": t.name, "imatrix": imx, "status": "failed", "error": str(e)})
            return
        bar.set_postfix_str(f"{row_key(t.name, imx)}: measuring")
        row = self._measure(dst, t, imx, "candidate")
        self.state.add(row)
        if not self.opts.keep_models:
            dst.unlink(missing_ok=True)

    def full_plan(self) -> list[tuple[GgufType, bool]]:
        """Every (type, imatrix) candidate of the whole sweep, in table order (the reference is measured apart)."""
        return [(t, imx) for t in self.opts.types for imx in _variants(t, self.opts.imatrix)
                if not (t.name == self.src.reference_type and not imx)]

    def plan(self) -> list[tuple[GgufType, bool]]:
        """This run's candidates: all of them, or every n-th from the i-th with --shard i/n."""
        full = self.full_plan()
        if self.opts.shard is None:
            return full
        i, n = self.opts.shard
        return full[i - 1::n]

    def run(self) -> list[dict]:
        """Measure every missing row (here, or as Ray tasks with --ray); returns all rows (reference first)."""
        plan = self.plan()
        with tqdm(total=len(plan) + 1, desc="sweep", unit="row", disable=not self.opts.progress,
                  file=sys.stderr) as bar:
            if self.opts.ray is not None:  # an unreachable cluster is said before the reference's minutes, not after
                from quant.ray_sweep import connect

                connect(self.opts.ray)
            bar.set_postfix_str(f"{self.src.reference_type}: reference")
            self._run_reference()
            bar.update(1)
            if self.opts.ray is not None:
                from quant.ray_sweep import run_on_ray

                run_on_ray(self, plan, bar)
                return self.rows()
            for t, imx in plan:
                if not self.state.done(row_key(t.name, imx)):
                    self._run_type(t, imx, bar)
                bar.update(1)
        return self.rows()

    def rows(self) -> list[dict]:
        ref_key = row_key(self.src.reference_type, False)
        wanted = [ref_key] + [row_key(t.name, imx) for t, imx in self.plan()]
        seen, out = set(), []
        for k in wanted:
            if k in self.state.rows and k not in seen:
                seen.add(k)
                out.append(self.state.rows[k])
        return out


def parse_size(text: str) -> float:
    """'500MB', '1.5G', '4.2GB', '800k' -> megabytes (decimal units)."""
    s = text.strip().upper().removesuffix("B")
    scale = {"K": 1e-3, "M": 1.0, "G": 1e3, "T": 1e6}
    try:
        if s and s[-1] in scale:
            return float(s[:-1]) * scale[s[-1]]
        return float(s) / 1e6
    except ValueError:
        raise SweepError(f"cannot read the size {text!r}; write it like 500MB or 4.5GB") from None


__all__ = ["Sweep", "SweepOptions", "SweepError", "parse_size", "parse_types"]
