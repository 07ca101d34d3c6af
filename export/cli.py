"""`venus-export`: tiny | train-tiny | build | verify | engines | bench | plan."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge.formats import VARIANTS
from export.errors import ExportError


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="venus-export", description="Export Realtime-Venus checkpoints to bundles.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    t = sub.add_parser("tiny", help="write a tiny checkpoint with the real layout and seeded random weights")
    t.add_argument("out", type=Path)
    t.add_argument("--variant", choices=VARIANTS, default="omni")
    t.add_argument("--seed", type=int, default=0)

    tt = sub.add_parser("train-tiny", help="a tiny checkpoint with the real layout, trained on synthetic "
                                           "full-duplex sessions (cached; minutes on a CPU the first time)")
    tt.add_argument("out", type=Path)
    tt.add_argument("--variant", choices=VARIANTS, default="audio")
    tt.add_argument("--seed", type=int, default=0)
    tt.add_argument("--steps", type=int, default=0, help="training steps (0: the variant's default)")
    tt.add_argument("--retrain", action="store_true", help="train again even when the cache holds the result")
    tt.add_argument("--no-progress", action="store_true")

    b = sub.add_parser("build", help="build a bundle from a checkpoint")
    b.add_argument("checkpoint", type=Path)
    b.add_argument("-o", "--out", type=Path, required=True, help="bundle directory")
    b.add_argument("--types", type=_csv, default=["Q4_K_M"], help="LLM GGUF types, e.g. F16,Q8_0,Q4_K_M")
    b.add_argument("--tts-types", type=_csv, default=["F16"], help="TTS GGUF types")
    b.add_argument("--encoders", type=_csv, default=["fp16"], help="ONNX precisions: fp32,fp16,int8")
    b.add_argument("--device", default="cpu", help="target device (see venus-export plan)")
    b.add_argument("--context", type=int, default=4096, help="LLM context the fit check plans for")
    b.add_argument("--kv", default="f16", help="KV cache type the fit check plans for (f16, q8_0, q4_0)")
    b.add_argument("--threads", type=int, default=0, help="quantizer threads (0: up to 4)")
    b.add_argument("--voice", type=Path, help="reference recording (WAV) of the bundle's voice; default: the "
                   "project's own edge/assets/two_plus_two.wav")
    b.add_argument("--no-onnx", action="store_true", help="leave the ONNX parts out (GGUF parts only)")
    b.add_argument("--dry-run", action="store_true", help="print what would be built and stop")
    b.add_argument("--no-progress", action="store_true")

    v = sub.add_parser("verify", help="check a bundle's hashes and, with --checkpoint, its numerical parity")
    v.add_argument("bundle", type=Path)
    v.add_argument("--checkpoint", type=Path)
    v.add_argument("--threads", type=int, default=1)

    e = sub.add_parser("engines", help="build a bundle's TensorRT engines for this device (run it on the device)")
    e.add_argument("bundle", type=Path, nargs="?", help="the bundle directory")
    e.add_argument("--print-key", action="store_true", help="print this device's engine key and stop")
    e.add_argument("--trtexec", help="path of trtexec (default: PATH, /usr/src/tensorrt/bin, else TensorRT's "
                                     "Python module)")
    e.add_argument("--workspace-gb", type=float, default=4.0, help="TensorRT builder workspace (default 4)")
    e.add_argument("--keep-old", action="store_true", help="keep engines built for other TensorRT versions or GPUs")
    e.add_argument("--dry-run", action="store_true", help="print the build commands and stop (no TensorRT needed)")
    e.add_argument("--tensorrt", metavar="VERSION", help="the device's TensorRT version, for --print-key and --dry-run "
                   "on a machine without it (e.g. 10.3.0 on JetPack 6.1/6.2)")
    e.add_argument("--gpu", metavar="NAME", help="the device's GPU part of the key (e.g. orin-nano-sm87), for "
                   "--print-key and --dry-run on another machine")

    be = sub.add_parser("bench", help="convert: LLM conversion throughput and peak memory against a naive writer; "
                                      "tiny: the trained tiny model's behaviour through the runtime")
    be.add_argument("what", nargs="?", choices=("convert", "tiny"), default="convert")
    be.add_argument("--size-mb", type=int, default=1100, help="convert: size of the generated checkpoint's LLM")
    be.add_argument("--workdir", type=Path, help="where to generate (default: a temporary directory)")
    be.add_argument("--variant", type=_csv, default=["audio", "omni"], help="tiny: variants to measure")
    be.add_argument("--sessions", type=int, default=20, help="tiny: held-out sessions per variant")
    be.add_argument("--chunks", type=int, default=20, help="tiny: chunks (seconds) per session")
    be.add_argument("--types", type=_csv, default=["F16"], help="tiny: LLM GGUF types to run, e.g. F16,Q4_K_M")
    be.add_argument("--seed", type=int, default=0, help="tiny: the training seed")
    be.add_argument("--pace", type=float, default=1.0, help="tiny: feed each session this many times faster than "
                                                             "real time (0: the virtual clock, where harness "
                                                             "results come too late to be spoken)")

    be.add_argument("--judge", choices=("on", "off"), default="off",
                    help="tiny: the barge-in judge may force a yield (on), or every yield is the model's own (off, "
                         "default)")
    be.add_argument("--chunk-ms", type=int, default=1000, help="tiny: the runtime's chunk length (default 1000; "
                                                                "the sessions are scored per second)")
    sub.add_parser("plan", help="which precisions fit a device (export.plan)", add_help=False)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plan"]:
        try:
            from export.plan import main as plan_main
        except ImportError:
            print("error: export.plan is not available in this installation.", file=sys.stderr)
            return 2
        return int(plan_main(argv[1:]) or 0)
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    if args.cmd == "tiny":
        from export.tiny import write_tiny

        config = write_tiny(args.out, args.variant, args.seed)
        print(f"wrote a tiny {args.variant} checkpoint to {args.out} "
              f"({config['num_hidden_layers']} LLM layers, vocab {config['vocab_size']})")
        return 0
    if args.cmd == "train-tiny":
        from export.train.cache import copy_checkpoint, trained_checkpoint
        from export.train.loop import TrainSettings

        settings = TrainSettings(args.variant, seed=args.seed, steps=args.steps)
        if args.out.exists() and any(args.out.iterdir()):
            raise ExportError(f"{args.out} is not empty; choose an empty directory for the trained checkpoint.")
        src = trained_checkpoint(settings, progress=not args.no_progress, retrain=args.retrain)
        copy_checkpoint(src, args.out)
        record = json.loads((src / "train.json").read_text())
        print(f"wrote a trained tiny {args.variant} checkpoint to {args.out} "
              f"(trained in {record['seconds']:.0f} s; cached at {src.parent})")
        return 0
    if args.cmd == "build":
        from export.build import BuildOptions, build

        opts = BuildOptions(types=args.types, tts_types=args.tts_types, encoders=args.encoders, device=args.device,
                            context=args.context, kv_type=args.kv, onnx=not args.no_onnx, dry_run=args.dry_run,
                            progress=not args.no_progress, threads=args.threads, voice=args.voice)
        manifest = build(args.checkpoint, args.out, opts)
        if not args.dry_run:
            n = len(manifest["files"])
            size = sum(f["size"] for f in manifest["files"].values()) / 1e6
            print(f"bundle {args.out}: {len(manifest['parts'])} parts, {n} files, {size:.1f} MB")
        return 0
    if args.cmd == "verify":
        from export.verify import format_table, verify

        rows = verify(args.bundle, args.checkpoint, args.threads)
        print(format_table(rows))
        failed = [r for r in rows if not r["ok"]]
        print(f"{len(rows) - len(failed)} of {len(rows)} checks passed")
        return 1 if failed else 0
    if args.cmd == "engines":
        return _engines(args)
    if args.cmd == "bench" and args.what == "tiny":
        from export.train.bench import run_bench as run_tiny

        bad = [v for v in args.variant if v not in ("audio", "omni")]
        if bad:
            raise ExportError(f"Unknown variant {bad[0]!r}: use audio, omni or both (audio,omni).")
        if args.pace < 0:
            raise ExportError("--pace must be 0 (the virtual clock) or a positive speed-up.")
        if not 100 <= args.chunk_ms <= 1000 or 1000 % args.chunk_ms:
            raise ExportError(f"--chunk-ms must divide a second into whole chunks (100 to 1000 ms), not "
                              f"{args.chunk_ms}.")
        return run_tiny(args.variant, args.sessions, args.chunks, args.workdir, args.seed, tuple(args.types),
                        pace=args.pace, judge=args.judge == "on", chunk_ms=args.chunk_ms)
    if args.cmd == "bench":
        from export.bench import run_bench

        return run_bench(args.size_mb, args.workdir)
    raise AssertionError(args.cmd)


def _engines(args: argparse.Namespace) -> int:
    from export.trt.builder import build_engines, planned_key

    if args.print_key or args.dry_run:
        # Neither builds anything: where TensorRT or the GPU is absent, the key names what is missing.
        key, missing = planned_key(args.tensorrt, args.gpu)
        if missing:
            print(f"note: {missing}", file=sys.stderr)
        if args.print_key:
            print(key)
            return 0
    else:
        key = None
        if args.tensorrt or args.gpu:
            raise ExportError("--tensorrt and --gpu only go with --print-key or --dry-run: a real build uses this "
                              "device's own TensorRT and GPU.")
    if args.bundle is None:
        raise ExportError("give the bundle directory: venus-export engines BUNDLE.")
    report = build_engines(args.bundle, key=key, trtexec=args.trtexec, workspace_gb=args.workspace_gb,
                           keep_old=args.keep_old, dry_run=args.dry_run)
    for line in report.lines:
        print(line)
    if args.dry_run:
        return 0
    if report.current:
        print(f"engines/current -> {report.key}")
        return 0
    if not report.failed:
        print("no graph of this bundle can become a TensorRT engine (see above); onnxruntime runs them all.")
        return 0
    print(f"{report.failed} graph(s) failed, so engines/current is not set and the runtime uses ONNX for this "
          "bundle; see the lines above.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
