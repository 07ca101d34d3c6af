"""Tiny Venus bundles for the tests: `venus-export tiny` + `venus-export build`, nothing added or edited.

Every file the runtime reads (graphs, voice prompt, runtime settings) is what
the exporter writes, so the tests run the bundle a user would build.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_export(*args: str) -> None:
    cmd = [sys.executable, "-c", "import sys; from export.cli import main; sys.exit(main(sys.argv[1:]))", *args]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"venus-export {' '.join(args)} failed: {done.stderr[-2000:]}")


def checkpoint(base: Path, variant: str) -> Path:
    """A tiny checkpoint as `venus-export tiny` writes it (made once per cache folder)."""
    ckpt = base / f"ckpt-{variant}"
    if not (ckpt / "config.json").is_file():
        run_export("tiny", "--variant", variant, str(ckpt))
    return ckpt


def export_bundle(base: Path, variant: str, name: str, *extra: str, ckpt: Path | None = None) -> tuple[Path, Path]:
    """A tiny checkpoint and its bundle, as `venus-export tiny` and `venus-export build` write them."""
    ckpt = ckpt or checkpoint(base, variant)
    bundle = base / name
    if not (bundle / "manifest.json").is_file():
        run_export("build", str(ckpt), "-o", str(bundle), "--types", "F16", "--encoders", "fp32", "--device", "cpu",
                   "--no-progress", *extra)
    return ckpt, bundle


def make_bundle(base: Path, variant: str) -> Path:
    return export_bundle(base, variant, f"bundle-{variant}")[1]
