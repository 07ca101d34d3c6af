"""Encoder precisions (ONNX FP32 / FP16 / INT8): embedding error against FP32 and the effect on the LLM.

Graphs come from the bundle; a precision the bundle lacks is derived from its
FP32 graph here (FP16 by onnxruntime's float16 converter with FP32 inputs and
outputs kept, INT8 by onnxruntime's dynamic quantization of the weights). The
effect on the LLM: each precision's embeddings are prefilled after `<unit>`
into the reference GGUF and the next-token distribution is compared with the
one FP32 embeddings give (KL divergence, top-1 agreement).
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from quant.chunks import ChunkStream, replay
from quant.engine import LlamaSession
from quant.metrics import compare_distributions, decision_agreement, embedding_error, log_softmax

PRECISIONS = ("fp32", "fp16", "int8")
N_SAMPLES = 4


def derive(fp32: Path, precision: str, out_dir: Path) -> Path:
    """An FP16 or INT8 copy of an FP32 graph, made once into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dst = out_dir / f"{fp32.stem}-{precision}.onnx"
    if dst.is_file():
        return dst
    tmp = dst.with_name(dst.stem + ".part.onnx")
    if precision == "fp16":
        import onnx
        from onnxruntime.transformers.float16 import convert_float_to_float16

        onnx.save(convert_float_to_float16(onnx.load(str(fp32)), keep_io_types=True), str(tmp))
    elif precision == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    else:
        raise ValueError(f"unknown encoder precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    tmp.replace(dst)
    return dst


def check_loads(path: Path) -> str:
    """Open the graph in a separate process first: a graph that crashes onnxruntime must not end the sweep."""
    code = ("import sys, onnxruntime as ort; "
            "ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    if proc.returncode < 0:
        return f"onnxruntime crashed opening {path.name} (signal {-proc.returncode})"
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip() and "W:onnxruntime" not in x]
        return f"onnxruntime cannot open {path.name}: {lines[-1] if lines else 'exit code %d' % proc.returncode}"
    return ""


def _patch(path: Path) -> int:
    """Kernel size of the graph's first Conv (a vision tower's patch), to size image inputs."""
    import onnx

    for node in onnx.load(str(path), load_external_data=False).graph.node:
        if node.op_type == "Conv":
            for a in node.attribute:
                if a.name == "kernel_shape":
                    return int(a.ints[-1])
    return 14


def _dim(name: str, axis_name: object, patch: int) -> int:
    if isinstance(axis_name, int) and axis_name >= 0:
        return axis_name
    n = str(axis_name).lower()
    if "past" in n:
        return 0  # the first chunk of a stream starts with an empty cache
    if n in ("height", "width") or "height" in n or "width" in n:
        return 4 * patch
    if "frame" in n:
        return 100  # one second of 100-frames-per-second log-mel
    return 1


def _synthetic_audio(rng: np.random.Generator, seconds: float = 1.0) -> np.ndarray:
    """A voiced-like test signal: a gliding harmonic tone with noise, 16 kHz."""
    t = np.arange(int(16000 * seconds)) / 16000
    f0 = rng.uniform(100, 250) * (1 + 0.3 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000
    tone = sum(np.sin(k * phase) / k for k in range(1, 6))
    return (0.2 * tone + 0.02 * rng.standard_normal(len(t))).astype(np.float32)


def sample_inputs(path: Path, n: int = N_SAMPLES, seed: int = 0, audio: list[np.ndarray] | None = None,
                  frames: list[np.ndarray] | None = None) -> list[dict[str, np.ndarray]]:
    """Inputs in the ranges the graphs see at run time: log-mel of real or synthetic audio, pixels in [-1, 1]."""
    import onnxruntime as ort

    from quant.audio_embed import log_mel

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    patch = _patch(path)
    rng = np.random.default_rng(seed)
    clips = [a for a in (audio or []) if a is not None and len(a) >= 1600][:n]
    images = [f for f in (frames or []) if f is not None][:n]
    out = []
    for k in range(n):
        feed = {}
        for i in sess.get_inputs():
            shape = [_dim(i.name, d, patch) for d in i.shape]
            dtype = np.float16 if "float16" in i.type else np.float32
            if i.name == "mel":
                clip = clips[k] if k < len(clips) else _synthetic_audio(rng)
                feed[i.name] = log_mel(clip, shape[1])[None].astype(dtype)
            elif "pixel" in i.name and k < len(images):
                from quant.vision_embed import frame_pixels, max_side

                feed[i.name] = frame_pixels(images[k], patch, max_side(path)).astype(dtype)
            elif "pixel" in i.name:
                feed[i.name] = rng.uniform(-1, 1, shape).astype(dtype)  # normalised (x - 0.5) / 0.5
            else:
                feed[i.name] = rng.standard_normal(shape).astype(dtype)
        out.append(feed)
    return out


def _run(path: Path, feeds: list[dict[str, np.ndarray]], threads: int) -> tuple[list[np.ndarray], float]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    types = {i.name: i.type for i in sess.get_inputs()}
    outs, t0 = [], time.perf_counter()
    for feed in feeds:
        cast = {k: v.astype(np.float16 if "float16" in types[k] else np.float32) for k, v in feed.items()}
        first = sess.run(None, cast)[0]
        outs.append(np.asarray(first, dtype=np.float32).reshape(-1, first.shape[-1]))
    return outs, (time.perf_counter() - t0) / max(len(feeds), 1) * 1000


def _llm_logits(session: LlamaSession | None, embeddings: list[np.ndarray]) -> np.ndarray | None:
    if session is None or embeddings[0].shape[-1] != session.n_embd:
        return None
    unit = session.token_id("<unit>")
    rows = []
    for e in embeddings:
        session.reset()
        if unit is not None:
            session.prefill([unit])
        rows.append(session.prefill_embeddings(e)[-1])
    return np.stack(rows)


def _file_mb(path: Path) -> float:
    data = path.with_name(path.name + ".data")
    return (path.stat().st_size + (data.stat().st_size if data.is_file() else 0)) / 1e6


def _decisions(session: LlamaSession, raw: ChunkStream | None, media: dict[str, Path]) -> tuple[list | None, str]:
    """The reference LLM's chunk decisions when the recorded media go through the graphs in `media`, or why not."""
    from quant.media_stream import embed_media

    if raw is None:
        return None, ""
    stream = embed_media(raw, session.n_embd, media.get("audio"), media.get("vision"))
    if stream is raw:
        return None, "the journal has no recorded media for this encoder"
    if "not embedded" in stream.source:
        return None, stream.source.split("; ")[-1]
    try:
        return replay(session, stream), ""
    except ValueError as e:  # no protocol tokens in this vocabulary, or a context too small for the stream
        return None, str(e)


def sweep_part(part: str, files: dict[str, Path], precisions: list[str], reference_gguf: Path | None,
               work: Path, threads: int = 1, raw_stream: ChunkStream | None = None,
               media: dict[str, Path] | None = None, n_ctx: int = 2048) -> list[dict]:
    """Rows for one encoder part: every precision against FP32 (and, for audio with a journal, its decisions)."""
    if "fp32" not in files:
        return [{"part": part, "precision": p, "status": "failed",
                 "error": f"the bundle has no FP32 {part} graph to compare with"} for p in precisions]
    audio = [c.audio for c in raw_stream.chunks] if raw_stream is not None and part == "audio" else None
    frames = [c.frame for c in raw_stream.chunks] if raw_stream is not None and part == "vision" else None
    broken = check_loads(files["fp32"])
    if broken:
        return [{"part": part, "precision": p, "status": "failed", "error": broken} for p in precisions]
    feeds = sample_inputs(files["fp32"], audio=audio, frames=frames)
    ref, _ = _run(files["fp32"], feeds, threads)
    session = LlamaSession(reference_gguf, n_ctx=n_ctx, n_threads=threads) if reference_gguf else None
    try:
        ref_logits = _llm_logits(session, ref)
        media = dict(media or {})
        ref_decisions, why_not = (_decisions(session, raw_stream, {**media, part: files["fp32"]}) if session
                                  else (None, ""))
        rows = []
        for p in precisions:
            row = {"part": part, "precision": p}
            try:
                path = files.get(p) or derive(files["fp32"], p, work)
                broken = check_loads(path)
                if broken:
                    raise RuntimeError(broken)
                out, ms = _run(path, feeds, threads)
            except Exception as e:  # onnxruntime raises its own types with long messages; keep the first line
                row.update(status="failed", error=str(e).strip().splitlines()[0])
                rows.append(row)
                continue
            err = embedding_error(np.concatenate(ref), np.concatenate(out))
            row.update(status="ok", file=str(path), size_mb=_file_mb(path), ms_per_call=ms, max_abs=err.max_abs,
                       mean_abs=err.mean_abs, rel_rms=err.rel_rms, min_cosine=err.min_cosine,
                       derived=p not in files, llm_kl=None, llm_top1=None)
            if ref_logits is not None:
                stats = compare_distributions(log_softmax(ref_logits), _llm_logits(session, out))
                row.update(llm_kl=stats.kl_mean, llm_top1=stats.top1)
            else:
                row["note"] = "embedding width differs from the LLM's; effect on the LLM not measured"
            decisions, why = (_decisions(session, raw_stream, {**media, part: path}) if ref_decisions
                              else (None, why_not))
            if decisions is not None:
                row["decision_agree"], row["delegate_agree"] = decision_agreement(ref_decisions, decisions)
            elif why:
                row["note"] = (row.get("note", "") + "; " if row.get("note") else "") + f"decisions not replayed: {why}"
            rows.append(row)
        return rows
    finally:
        if session is not None:
            session.close()


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
                           media=media, n_ctx=sweep.n_ctx)
    return rows


_COLS = [("part", "part", "{}"), ("precision", "precision", "{}"), ("size_mb", "size MB", "{:.2f}"),
         ("max_abs", "max err", "{:.2e}"), ("mean_abs", "mean err", "{:.2e}"), ("min_cosine", "min cos", "{:.5f}"),
         ("llm_kl", "LLM KL", "{:.2e}"), ("llm_top1", "LLM top-1", "{:.3f}"),
         ("decision_agree", "listen/speak", "{:.3f}"), ("delegate_agree", "delegate", "{:.3f}"),
         ("ms_per_call", "ms/call", "{:.1f}"),
         ("status", "status", "{}")]


def _cells(r: dict) -> list[str]:
    return ["-" if r.get(c) is None else f.format(r[c]) for c, _, f in _COLS]


def encoder_markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(h for _, h, _ in _COLS) + " |", "|" + "|".join("---" for _ in _COLS) + "|"]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    failed = [f"- {r['part']} {r['precision']}: {r['error']}" for r in rows if r.get("status") != "ok"]
    notes = [f"- {r['part']} {r['precision']}: {r['note']}" for r in rows if r.get("note")]
    lines += [""] + failed + notes if failed or notes else []
    return "\n".join(lines)


def encoder_text_table(rows: list[dict]) -> str:
    cells = [[h for _, h, _ in _COLS]] + [_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(_COLS))]
    return "\n".join("  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths)))
                     for c in cells)
