"""What the benches that run a whole embedded-default session share: the decision model's flags and their one
check, the settings those flags give the frontend, and the folder the run keeps its files in."""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from edge.detect.asr import MODELS as ASR_MODELS


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """--threads, --asr, --llm-gguf and --realtime, as `bench chat` and `bench answers` take them."""
    p.add_argument("--threads", type=int, default=1, help="inference threads per model (default 1)")
    p.add_argument("--asr", choices=ASR_MODELS, default=None, help="the frontend's recognizer (default: its own)")
    p.add_argument("--llm-gguf", type=Path, default=None,
                   help="another GGUF chat model as the decision model (default: the packaged Qwen2.5-Coder-0.5B)")
    p.add_argument("--realtime", action="store_true", help="run in real time (default: as fast as the graph allows)")


def model_flags_problem(args: argparse.Namespace) -> str | None:
    """One sentence when the flags name a model that is not there."""
    if args.llm_gguf is not None and not args.llm_gguf.is_file():
        return f"{args.llm_gguf} does not exist; give the path of a GGUF model file."
    return None


def model_extra(args: argparse.Namespace) -> dict:
    """The embedded default's settings the flags ask for (its own defaults where they are not given)."""
    extra: dict = {"asr": args.asr} if args.asr else {}
    if args.llm_gguf is not None:
        extra["llm_gguf"] = str(args.llm_gguf)
    return extra


def session_folder(out: str | None, bench: str) -> Path:
    """--out, else a new temporary folder named for the bench; made ready for the session's files.

    Idle OpenMP threads are told to sleep first (the session's model processes inherit it): spinning ones
    would take the cores the graph's other processes need."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    folder = Path(out) if out else Path(tempfile.mkdtemp(prefix=f"venus-bench-{bench}-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
