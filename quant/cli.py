"""`venus-quant`: precision sweeps and recommendations.

    venus-quant sweep MODEL --types F16,Q8_0,Q6_K,Q5_K_M,Q4_K_M,IQ4_XS -o DIR
    venus-quant recommend DIR --device orin-nano-8 --variant audio
    venus-quant report DIR
    venus-quant sweep MODEL --ray ADDRESS -o DIR       (every candidate a task on a Ray cluster)
    venus-quant sweep MODEL --shard 2/3 -o DIR2         (by hand: one machine's share) ...
    venus-quant merge DIR1 DIR2 DIR3 -o DIR             (... joined into one sweep)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

DEFAULT_TYPES = "F16,Q8_0,Q6_K,Q5_K_M,Q4_K_M,IQ4_XS"


def _read(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{what} file {p} does not exist")
    return p.read_text(encoding="utf-8", errors="replace")


def _sweep_parser(sub) -> None:
    p = sub.add_parser("sweep", help="quantize to each type and measure size, speed and quality")
    p.add_argument("source", help="a GGUF file, a bundle directory or a checkpoint directory")
    p.add_argument("-o", "--out", required=True, help="sweep directory (resumed if it exists)")
    p.add_argument("--types", default=DEFAULT_TYPES, help=f"GGUF types, comma-separated (default {DEFAULT_TYPES})")
    p.add_argument("--encoders", default="", help="encoder precisions to compare, e.g. fp32,fp16,int8")
    p.add_argument("--voice", default="",
                   help="speech decoder (token2wav flow) precisions to compare on a bundle, e.g. "
                        "fp32,fp16,int8,int8-static,int8-static-conv")
    p.add_argument("--tts-types", default="",
                   help="GGUF types of a bundle's TTS model to compare with its own, e.g. F16,Q8_0,Q4_K_M")
    p.add_argument("--vocoder", default="", help="vocoder precisions to compare on a bundle: fp32,fp16,int8")
    p.add_argument("--imatrix", default="off",
                   help="off, on (compute from --calib), both (measure each type with and without), or an imatrix "
                        "file (.npz from venus-quant, .gguf from llama-imatrix)")
    p.add_argument("--text", help="evaluation text file (default: a built-in English text)")
    p.add_argument("--calib", help="calibration text file for the imatrix (default: a different built-in text)")
    p.add_argument("--journal", action="append",
                   help="a runtime journal whose chunk stream is replayed for decision agreement; repeat it to "
                        "join several sessions (each replays from an empty context)")
    p.add_argument("--max-tokens", type=int, default=256, help="evaluation tokens (default 256)")
    p.add_argument("--max-chunks", type=int, default=32, help="chunks replayed from each journal (default 32)")
    p.add_argument("--ctx", type=int, default=2048, help="context size for measuring (default 2048)")
    p.add_argument("--decode-tokens", type=int, default=32, help="tokens decoded for the decode speed (default 32)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per precision; the fastest counts (default 3)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads")
    p.add_argument("--gpu-layers", type=int, default=0, help="layers offloaded to the GPU (-1: all)")
    p.add_argument("--budget", help="size budget for the verdict line, e.g. 5GB (default: half the reference)")
    p.add_argument("--no-mmap", action="store_true",
                   help="read the whole model at load (load time then includes reading the weights)")
    p.add_argument("--keep-models", action="store_true", help="keep the quantized GGUFs in DIR/models")
    p.add_argument("--fresh", action="store_true", help="forget rows of an earlier sweep in DIR")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run every candidate as a task on the Ray cluster at ADDRESS (alone: $RAY_ADDRESS, else the "
                        "cluster this machine belongs to)")
    p.add_argument("--boards", default="auto",
                   help="with --ray: board kinds (cluster resources such as orin-nano-8) that time every model: auto "
                        "(every one present, the default), none, or a comma-separated list")
    p.add_argument("--shared", action="store_true",
                   help="with --ray: the input and -o are at the same paths on every node (a network file system), "
                        "so the reference GGUF is read there instead of copied through Ray's object store")
    p.add_argument("--retries", type=int, default=1,
                   help="with --ray: times a task lost with its node, or crashed, is run again elsewhere (default 1)")
    p.add_argument("--shard", help="I/N: measure only every N-th candidate from the I-th (join shards with merge)")


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"cannot read --shard {text!r}; write it as I/N, e.g. 2/3") from None
    if not 1 <= i <= n:
        raise ValueError(f"--shard {text}: I must be from 1 to N")
    return i, n


def ray_address(a) -> str | None:
    if a.ray is None:
        return None
    return a.ray or os.environ.get("RAY_ADDRESS") or "auto"


def cmd_sweep(a) -> int:
    from quant.report import default_budget
    from quant.state import row_key
    from quant.sweep import Sweep, SweepOptions, parse_size, parse_types
    from quant.texts import CALIB_TEXT, EVAL_TEXT

    opts = SweepOptions(
        source=a.source, out=Path(a.out), types=parse_types(a.types), imatrix=a.imatrix,
        text=_read(a.text, "evaluation text") or EVAL_TEXT, calib=_read(a.calib, "calibration text") or CALIB_TEXT,
        journal=a.journal, max_tokens=a.max_tokens, max_chunks=a.max_chunks, n_ctx=a.ctx,
        decode_tokens=a.decode_tokens, repeats=a.repeats, n_threads=a.threads, n_gpu_layers=a.gpu_layers,
        keep_models=a.keep_models, use_mmap=not a.no_mmap,
        fresh=a.fresh, progress=not a.no_progress,
        encoders=[e.strip().lower() for e in a.encoders.split(",") if e.strip()],
        shard=parse_shard(a.shard), ray=ray_address(a), boards=a.boards, shared=a.shared, retries=a.retries)
    if opts.ray is not None and opts.shard is not None:
        raise ValueError("--ray spreads the whole sweep by itself; give --ray or --shard, not both")
    if opts.retries < 0:
        raise ValueError("--retries cannot be negative")
    from quant.voice_sweep import PRECISIONS as VOICE_PRECISIONS

    voice = [v.strip().lower() for v in a.voice.split(",") if v.strip()]
    bad = [v for v in voice if v not in VOICE_PRECISIONS]
    if bad:
        print(f"venus-quant sweep: unknown speech decoder precision {bad[0]!r}; choose from "
              f"{', '.join(VOICE_PRECISIONS)}.", file=sys.stderr)
        return 2
    with Sweep(opts) as sweep:
        rows = sweep.run()
        # a shard measures its share of the LLM types; the encoder and speech decoder rows are the first shard's
        first = opts.shard is None or opts.shard[0] == 1
        enc_rows = []
        if opts.encoders and first:
            from quant.encoder_sweep import run_encoder_sweep

            on_ray = None
            if opts.ray is not None:
                from quant.ray_sweep import encoder_rows_on_ray

                on_ray = encoder_rows_on_ray(sweep, opts.encoders)
            enc_rows = run_encoder_sweep(sweep, opts.encoders) if on_ray is None else on_ray
        voice_rows = []
        if voice and first:
            from quant.voice_sweep import run_voice_sweep

            voice_rows = run_voice_sweep(sweep, voice)
        speech_rows = run_speech(sweep, a) if first else []
        budget = parse_size(a.budget) if a.budget else default_budget(rows)
        ref = next(r for r in rows if r.get("reference"))
        meta = {"source": str(a.source), "reference": str(sweep.src.reference),
                "reference_type": sweep.src.reference_type, "n_eval_tokens": ref.get("n_eval_tokens"),
                "n_chunks": ref.get("n_chunks", 0), "stream_source": sweep.stream.source,
                "imatrix_note": imatrix_note(sweep), "identity": sweep.state.identity,
                "plan": [row_key(t.name, imx) for t, imx in sweep.full_plan()],
                "shard": f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
                "ray": opts.ray, "title": f"Quantization sweep of {Path(a.source).name}"}
        write_all(sweep.out, rows, meta, budget, enc_rows, voice_rows, speech_rows)
    print_all(sweep.out, rows, enc_rows, voice_rows, budget, speech_rows)
    return 0


def run_speech(sweep, a) -> list[dict]:
    """The TTS type and vocoder rows (--tts-types, --vocoder) of a bundle, or why not."""
    tts = [t.strip().upper() for t in a.tts_types.split(",") if t.strip()]
    voc = [v.strip().lower() for v in a.vocoder.split(",") if v.strip()]
    if not tts and not voc:
        return []
    if sweep.src.kind != "bundle":
        why = f"a {sweep.src.kind} has no TTS model or vocoder; sweep a bundle built by venus-export build"
        return [{"part": part, "precision": p, "status": "failed", "error": why}
                for part, ps in (("tts", tts), ("vocoder", voc)) for p in ps]
    from quant.speech_sweep import sweep_tts, sweep_vocoder

    work, threads = sweep.out / "speech", sweep.opts.n_threads
    return (sweep_tts(sweep.src.path, tts, work, threads) if tts else []) + \
        (sweep_vocoder(sweep.src.path, voc, work, threads, sweep.opts.repeats) if voc else [])


def write_all(out: Path, rows: list[dict], meta: dict, budget: float, enc_rows: list[dict],
              voice_rows: list[dict], speech_rows: list[dict] | None = None) -> None:
    """The files a sweep leaves: sweep.csv, results.json, report.md and pareto.png."""
    from quant.plot import pareto_plot
    from quant.report import write_reports

    write_reports(out, rows, meta, budget, enc_rows, voice_rows, speech_rows)
    pareto_plot(rows, out / "pareto.png", title=meta.get("title", ""))


def print_all(out: Path, rows: list[dict], enc_rows: list[dict], voice_rows: list[dict], budget: float,
              speech_rows: list[dict] | None = None) -> None:
    from quant.report import text_table, verdict

    print(text_table(rows))
    if enc_rows:
        from quant.encoder_sweep import encoder_text_table

        print()
        print(encoder_text_table(enc_rows))
    if voice_rows:
        from quant.voice_sweep import verdict as voice_verdict, voice_text_table

        print()
        print(voice_text_table(voice_rows))
        print(voice_verdict(voice_rows))
    if speech_rows:
        from quant.speech_sweep import speech_text_table

        print()
        print(speech_text_table(speech_rows))
    print(f"\nreport: {out / 'report.md'}  plot: {out / 'pareto.png'}  csv: {out / 'sweep.csv'}")
    print(verdict(rows, budget))


def imatrix_note(sweep) -> str:
    mode = sweep.opts.imatrix
    if not any(r.get("imatrix") for r in sweep.rows()):
        return "not used (--imatrix off)."
    if mode in ("off", "on", "both"):
        return ("computed in Python from the calibration text through llama.cpp's graph-evaluation callback "
                "(mean squared input activation of every layer weight, as llama-imatrix collects) and passed to "
                "llama.cpp's quantizer through llama_model_quantize_params.imatrix.")
    return f"read from {mode} and passed to llama.cpp's quantizer through llama_model_quantize_params.imatrix."


def _recommend_parser(sub) -> None:
    p = sub.add_parser("recommend", help="the best precision from a sweep that fits a device")
    p.add_argument("sweep", help="a sweep directory (with results.json)")
    p.add_argument("--device", required=True, help="a device known to the planner, e.g. orin-nano-8")
    p.add_argument("--variant", default="omni", help="omni or audio (default omni)")
    p.add_argument("--context", type=int, default=4096, help="LLM context in tokens (default 4096)")
    p.add_argument("--encoder", default="auto", help="encoder precision fp32/fp16/int8, or auto (default)")
    p.add_argument("--kv", default="f16", help="KV cache type for the planner: f16, q8_0 or q4_0 (default f16)")
    p.add_argument("--tts-type", default="Q8_0", help="GGUF type of the TTS model for the planner (default Q8_0)")


def cmd_recommend(a) -> int:
    from quant.recommend import format_recommendation, recommend

    rec = recommend(Path(a.sweep), a.device, a.variant, a.context, a.encoder, kv_type=a.kv, tts_type=a.tts_type)
    print(format_recommendation(rec))
    return 0 if rec.best else 1


def _report_parser(sub) -> None:
    p = sub.add_parser("report", help="print the table and verdict of a finished sweep")
    p.add_argument("sweep", help="a sweep directory (with results.json)")
    p.add_argument("--budget", help="size budget for the verdict line, e.g. 5GB")


def cmd_report(a) -> int:
    from quant.report import text_table, verdict
    from quant.sweep import parse_size

    path = Path(a.sweep) / "results.json"
    if not path.is_file():
        raise ValueError(f"{a.sweep} holds no results.json; run venus-quant sweep into it first")
    data = json.loads(path.read_text())
    print(text_table(data["rows"]))
    print(verdict(data["rows"], parse_size(a.budget) if a.budget else data["budget_mb"]))
    return 0


def _merge_parser(sub) -> None:
    p = sub.add_parser("merge", help="join the directories of one sweep's shards (--shard I/N) into one sweep")
    p.add_argument("dirs", nargs="+", help="the shards' sweep directories")
    p.add_argument("-o", "--out", required=True, help="the merged sweep directory")
    p.add_argument("--budget", help="size budget for the verdict line, e.g. 5GB (default: half the reference)")


def cmd_merge(a) -> int:
    from quant.merge import merge
    from quant.report import default_budget
    from quant.sweep import parse_size

    out = Path(a.out)
    rows, meta, enc_rows, voice_rows, speech_rows, missing = merge([Path(d) for d in a.dirs], out)
    budget = parse_size(a.budget) if a.budget else default_budget(rows)
    write_all(out, rows, meta, budget, enc_rows, voice_rows, speech_rows)
    print_all(out, rows, enc_rows, voice_rows, budget, speech_rows)
    if missing:
        print(f"venus-quant merge: no shard holds {', '.join(missing)}; run its shard and merge again",
              file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="venus-quant", description="GGUF and encoder precision sweeps.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _sweep_parser(sub)
    _recommend_parser(sub)
    _report_parser(sub)
    _merge_parser(sub)
    a = ap.parse_args(argv)
    from quant.state import SweepError

    try:
        return {"sweep": cmd_sweep, "recommend": cmd_recommend, "report": cmd_report, "merge": cmd_merge}[a.cmd](a)
    except (ValueError, FileNotFoundError, SweepError) as e:
        print(f"venus-quant {a.cmd}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and cut short: nothing is wrong with the sweep
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"venus-quant {a.cmd}: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
