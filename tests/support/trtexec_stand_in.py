"""A stand-in for TensorRT's trtexec on machines without a GPU: records its arguments, writes the engine file.

Real trtexec parses --onnx, builds, and with --saveEngine=FILE writes the serialized
engine there (exit status 0), or prints its errors and exits non-zero. This one keeps
one line of arguments per call in `calls`, a copy of the graph it was given in `seen/`,
and fails (like trtexec on a graph it cannot build) when the graph's path contains
$TRTEXEC_FAIL.
"""
from __future__ import annotations

from pathlib import Path

SCRIPT = r"""#!/usr/bin/env bash
here="$(dirname "$0")"
echo "$*" >> "$here/calls"
for a in "$@"; do
  case "$a" in
    --onnx=*) onnx="${a#--onnx=}"; mkdir -p "$here/seen"; cp "$onnx" "$here/seen/" ;;
    --saveEngine=*) engine="${a#--saveEngine=}" ;;
  esac
done
if [ -n "${TRTEXEC_FAIL:-}" ] && [[ "$onnx" == *"$TRTEXEC_FAIL"* ]]; then
  echo "[E] Error[4]: [graphShapeAnalyzer.cpp::analyzeShapes::2084] could not infer the shape of an output"
  echo "&&&& FAILED TensorRT.trtexec"
  exit 1
fi
echo "serialized engine of $onnx" > "$engine"
echo "&&&& PASSED TensorRT.trtexec"
"""


def install(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "trtexec"
    exe.write_text(SCRIPT)
    exe.chmod(0o755)
    return exe


def calls(exe: Path) -> list[str]:
    f = exe.parent / "calls"
    return f.read_text().splitlines() if f.exists() else []
