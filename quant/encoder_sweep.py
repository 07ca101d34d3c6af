"""Encoder precisions (ONNX FP32 / FP16 / INT8): embedding error against FP32 and the effect on the LLM.

Graphs come from the bundle; a precision the bundle lacks is made from its FP32
graph as venus-export makes it (export.onnx.precision), its INT8 calibrated on
the sweep's own media. Every precision runs inside the runtime's own encoder
(quant.media_stream) on the same media, in order: the journal's recorded chunks
and frames, else synthetic ones, so the audio cache is carried and frames are
sliced as on the device. The effect on the LLM: each precision's embeddings are
prefilled as the chunk loop prefills them (`<unit>`, and `<image>`...`</image>`
around a frame's slices) into the reference GGUF, and the next-token
distribution is compared with the one FP32 embeddings give (KL divergence, top-1
agreement).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from edge.audio_format import RATE
from edge.backends.llama import LlamaError, LlamaModel
from edge.formats import ONNX_PRECISIONS
from edge.protocol.tokens import IMAGE_CLOSE, IMAGE_OPEN, UNIT_OPEN
from quant.chunks import ChunkStream, replay, single_id
from quant.metrics import compare_distributions, decision_agreement, embedding_error, log_softmax
from quant.tables import aligned, grid, markdown

PRECISIONS = ONNX_PRECISIONS
N_SAMPLES = 4


def derive(fp32: Path, precision: str, out_dir: Path, calibration: list[dict[str, np.ndarray]]) -> Path:
    """An FP16 or INT8 copy of an FP32 encoder graph made as venus-export makes it (export.onnx.precision: FP16
    with positions, softmax and norms kept FP32; static QDQ INT8, calibrated here on the graph inputs the sweep's
    media give), once into out_dir and named as the exporter names its graphs: the runtime picks session
    options by that name."""
    from export.onnx.precision import to_fp16, to_int8_static

    out_dir.mkdir(parents=True, exist_ok=True)
    name = fp32.name.replace(".fp32.", f".{precision}.") if ".fp32." in fp32.name else f"{fp32.stem}.{precision}.onnx"
    dst = out_dir / name
    if dst.is_file():
        return dst
    if precision not in ("fp16", "int8"):
        raise ValueError(f"unknown encoder precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    part = out_dir / ".part"  # made under its final name (a side file of weights is found by name), then moved
    part.mkdir(exist_ok=True)
    tmp = part / name
    if precision == "fp16":
        to_fp16(fp32, tmp)
    else:
        to_int8_static(fp32, tmp, calibration)
    side = tmp.with_name(tmp.name + ".data")  # the weights of a graph past protobuf's 2 GB limit
    if side.is_file():
        side.replace(dst.with_name(side.name))
    tmp.replace(dst)
    return dst


def check_loads(path: Path) -> str:
    """Open the graph as the runtime opens it (edge.backends.onnx, CPU), in a separate process first: a graph that
    crashes onnxruntime must not end the sweep."""
    code = ("import sys\nfrom pathlib import Path\nfrom edge.backends.onnx import OnnxGraph\n"
            "try:\n    OnnxGraph(Path(sys.argv[1]), 'cpu')\nexcept RuntimeError as e:\n    sys.exit(str(e))")
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env)
    if proc.returncode < 0:
        return f"onnxruntime crashed opening {path.name} (signal {-proc.returncode})"
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip() and "W:onnxruntime" not in x]
        return lines[-1] if lines else f"onnxruntime cannot open {path.name}: exit code {proc.returncode}"
    return ""


def _synthetic_audio(rng: np.random.Generator, seconds: float = 1.0) -> np.ndarray:
    """A voiced-like test signal: a gliding harmonic tone with noise, 16 kHz."""
    t = np.arange(int(RATE * seconds)) / RATE
    f0 = rng.uniform(100, 250) * (1 + 0.3 * t)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    tone = sum(np.sin(k * phase) / k for k in range(1, 6))
    return (0.2 * tone + 0.02 * rng.standard_normal(len(t))).astype(np.float32)


def _synthetic_frame(rng: np.random.Generator) -> np.ndarray:
    """A 640x480 RGB frame of smooth colour gradients with noise (sliced into several views, as a camera's is)."""
    y, x = np.mgrid[0:480, 0:640] / 640.0
    base = np.stack([np.sin(6 * x + rng.uniform(0, 6)), np.cos(5 * y + rng.uniform(0, 6)), np.sin(4 * (x + y))], -1)
    img = 127.5 * (1 + base) + rng.normal(0, 12, base.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def sample_media(part: str, n: int = N_SAMPLES, seed: int = 0, audio: list[np.ndarray] | None = None,
                 frames: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """What every precision encodes, in order: recorded chunks (audio) or frames (vision), topped up with
    synthetic ones to `n`."""
    rng = np.random.default_rng(seed)
    if part == "audio":
        got = [a for a in (audio or []) if a is not None and len(a)][:n]
        return got + [_synthetic_audio(rng) for _ in range(n - len(got))]
    got = [f for f in (frames or []) if f is not None][:n]
    return got + [_synthetic_frame(rng) for _ in range(n - len(got))]


def _run(part: str, path: Path, config: dict, media: list[np.ndarray], threads: int, record: list | None = None
         ) -> tuple[list[np.ndarray], float]:
    """Each item's embeddings from the runtime's encoder over `path` (a fresh stream), and ms per item."""
    from quant.media_stream import audio_encoder, vision_encoder

    enc = (audio_encoder if part == "audio" else vision_encoder)(path, config, threads, record)
    outs, t0 = [], time.perf_counter()
    for item in media:
        outs.append(np.asarray(enc.encode(item), dtype=np.float32))
    return outs, (time.perf_counter() - t0) / max(len(media), 1) * 1000


def _llm_logits(llm: LlamaModel | None, part: str, embeddings: list[np.ndarray]) -> np.ndarray | None:
    """The next-token logits after each item's embeddings, prefilled as the chunk loop prefills them."""
    if llm is None or embeddings[0].shape[-1] != llm.n_embd:
        return None
    before, after = [UNIT_OPEN, IMAGE_OPEN], [IMAGE_CLOSE]
    if part != "vision":
        before, after = [UNIT_OPEN], []
    ids_before = [i for i in (single_id(llm, t) for t in before) if i is not None]
    ids_after = [i for i in (single_id(llm, t) for t in after) if i is not None]
    rows = []
    for e in embeddings:
        llm.clear()
        llm.prefill_tokens(ids_before, want_logits=False)
        last = llm.prefill_embeddings(e, want_logits=True)
        if ids_after:
            last = llm.prefill_tokens(ids_after)
        rows.append(np.array(last))
    return np.stack(rows)


def _file_mb(path: Path) -> float:
    data = path.with_name(path.name + ".data")
    return (path.stat().st_size + (data.stat().st_size if data.is_file() else 0)) / 1e6


def _decisions(llm: LlamaModel, raw: ChunkStream | None, media: dict[str, Path], config: dict
               ) -> tuple[list | None, str]:
    """The reference LLM's chunk decisions when the recorded media go through the graphs in `media`, or why not."""
    from quant.media_stream import embed_media

    if raw is None:
        return None, ""
    stream = embed_media(raw, llm.n_embd, media.get("audio"), media.get("vision"), config)
    if stream is raw:
        return None, "the journal has no recorded media for this encoder"
    if "not embedded" in stream.source:
        return None, stream.source.split("; ")[-1]
    try:
        return replay(llm, stream), ""
    except (ValueError, LlamaError) as e:  # no protocol tokens in this vocabulary, or a context too small
        return None, str(e)


def _first_line(e: Exception) -> str:
    """onnxruntime raises its own types with long messages; keep the first line."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def sweep_part(part: str, files: dict[str, Path], precisions: list[str], reference_gguf: Path | None,
               work: Path, threads: int = 1, raw_stream: ChunkStream | None = None,
               media: dict[str, Path] | None = None, n_ctx: int = 2048, config: dict | None = None) -> list[dict]:
    """Rows for one encoder part: every precision against FP32 (and, with a journal, its decisions)."""
    def failed(why: str) -> list[dict]:
        return [{"part": part, "precision": p, "status": "failed", "error": why} for p in precisions]

    if "fp32" not in files:
        return failed(f"the bundle has no FP32 {part} graph to compare with")
    config = config or {}
    audio = [c.audio for c in raw_stream.chunks] if raw_stream is not None and part == "audio" else None
    frames = [c.frame for c in raw_stream.chunks] if raw_stream is not None and part == "vision" else None
    broken = check_loads(files["fp32"])
    if broken:
        return failed(broken)
    samples = sample_media(part, audio=audio, frames=frames)
    feeds: list[dict[str, np.ndarray]] = []  # what the FP32 graph was given: an INT8 graph is calibrated on it
    try:
        ref, _ = _run(part, files["fp32"], config, samples, threads, feeds)
    except (ValueError, RuntimeError) as e:  # a graph the runtime's encoder cannot drive
        return failed(_first_line(e))
    llm = LlamaModel(reference_gguf, n_ctx, threads) if reference_gguf else None
    try:
        ref_logits = _llm_logits(llm, part, ref)
        media = dict(media or {})
        ref_decisions, why_not = (_decisions(llm, raw_stream, {**media, part: files["fp32"]}, config) if llm
                                  else (None, ""))
        rows = []
        for p in precisions:
            row = {"part": part, "precision": p}
            try:
                path = files.get(p) or derive(files["fp32"], p, work, feeds)
                broken = check_loads(path)
                if broken:
                    raise RuntimeError(broken)
                out, ms = _run(part, path, config, samples, threads)
            except Exception as e:  # onnxruntime raises its own types
                row.update(status="failed", error=_first_line(e))
                rows.append(row)
                continue
            err = embedding_error(np.concatenate(ref), np.concatenate(out))
            row.update(status="ok", file=str(path), size_mb=_file_mb(path), ms_per_call=ms, max_abs=err.max_abs,
                       mean_abs=err.mean_abs, rel_rms=err.rel_rms, min_cosine=err.min_cosine,
                       derived=p not in files, llm_kl=None, llm_top1=None)
            if ref_logits is not None:
                stats = compare_distributions(log_softmax(ref_logits), _llm_logits(llm, part, out))
                row.update(llm_kl=stats.kl_mean, llm_top1=stats.top1)
            else:
                row["note"] = "embedding width differs from the LLM's; effect on the LLM not measured"
            decisions, why = (_decisions(llm, raw_stream, {**media, part: path}, config) if ref_decisions
                              else (None, why_not))
            if decisions is not None:
                row["decision_agree"], row["delegate_agree"] = decision_agreement(ref_decisions, decisions)
            elif why:
                row["note"] = (row.get("note", "") + "; " if row.get("note") else "") + f"decisions not replayed: {why}"
            rows.append(row)
        return rows
    finally:
        if llm is not None:
            llm.close()


def run_encoder_sweep(sweep, precisions: list[str]) -> list[dict]:
    bad = [p for p in precisions if p not in PRECISIONS]
    if bad:
        raise ValueError(f"unknown encoder precision {bad[0]!r}; choose from {', '.join(PRECISIONS)}")
    parts = sweep.src.encoders
    if not parts:
        why = ("a bare GGUF has no encoders; sweep a bundle built with --encoders fp32" if sweep.src.kind == "gguf"
               else sweep.encoder_note or f"the {sweep.src.kind} has no ONNX encoder graphs")
        return [{"part": "-", "precision": p, "status": "failed", "error": why} for p in precisions]
    from quant.media_stream import best_graph

    media = {p: g for p, g in ((p, best_graph(f)) for p, f in parts.items()) if g is not None}
    from tqdm import tqdm

    rows = []
    for part, files in tqdm(sorted(parts.items()), desc="encoders", unit="part", disable=not sweep.opts.progress,
                            file=sys.stderr):
        rows += sweep_part(part, files, precisions, sweep.src.reference, sweep.out / "encoders",
                           threads=sweep.opts.n_threads, raw_stream=sweep.raw_stream if sweep.opts.journal else None,
                           media=media, n_ctx=sweep.n_ctx, config=sweep.src.config)
    return rows


_COLS = [("part", "part", "{}"), ("precision", "precision", "{}"), ("size_mb", "size MB", "{:.2f}"),
         ("max_abs", "max err", "{:.2e}"), ("mean_abs", "mean err", "{:.2e}"), ("min_cosine", "min cos", "{:.5f}"),
         ("llm_kl", "LLM KL", "{:.2e}"), ("llm_top1", "LLM top-1", "{:.3f}"),
         ("decision_agree", "listen/speak", "{:.3f}"), ("delegate_agree", "delegate", "{:.3f}"),
         ("ms_per_call", "ms/call", "{:.1f}"),
         ("status", "status", "{}")]


def encoder_markdown(rows: list[dict]) -> str:
    lines = markdown(grid(rows, _COLS))
    failed = [f"- {r['part']} {r['precision']}: {r['error']}" for r in rows if r.get("status") != "ok"]
    notes = [f"- {r['part']} {r['precision']}: {r['note']}" for r in rows if r.get("note")]
    lines += [""] + failed + notes if failed or notes else []
    return "\n".join(lines)


def encoder_text_table(rows: list[dict]) -> str:
    return "\n".join(aligned(grid(rows, _COLS), left=2))
