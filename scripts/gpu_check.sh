#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, build TensorRT engines for the tiny Omni and Audio bundles with
# the real TensorRT, run the gpu-marked tests, and print each engine's agreement with onnxruntime and both
# timings. Budget: under 8 minutes (each step has its own time limit). Without an NVIDIA GPU it says so and
# exits 0. Run from the repository root, in the project's virtualenv (scripts/setup.sh with the gpu extra).
set -u
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi finds none), so there is nothing to check; skipped."
    exit 0
fi
if ! python -c "import tensorrt" >/dev/null 2>&1; then
    echo "gpu_check: TensorRT's Python module is not installed (pip install tensorrt, or JetPack's), so no engine can be built."
    exit 2
fi
started=$(date +%s)
work=${GPU_CHECK_DIR:-$(mktemp -d)}
export PYTHONPATH=$PWD VENUS_TEST_CACHE=$work
nvidia-smi -L
python -c "import tensorrt, onnxruntime as o; print('TensorRT', tensorrt.__version__, '| onnxruntime', o.__version__, o.get_available_providers())"

echo "== tiny bundles (venus-export tiny + build) in $work"
timeout 120 python - <<PY || { echo "gpu_check: the tiny bundles could not be exported"; exit 1; }
import sys
sys.path.insert(0, "tests/support")
from pathlib import Path
from bundle_support import make_bundle
for v in ("omni", "audio"):
    print(v, make_bundle(Path("$work"), v))
PY

status=0
for v in omni audio; do
    echo "== venus-export engines $work/bundle-$v"
    timeout 100 python -m export.cli engines "$work/bundle-$v" || status=1
done

echo "== gpu-marked tests"
timeout 90 python -m pytest -q -m gpu tests/edge/frontend/venus/test_venus_gpu.py -p no:cacheprovider || status=1

echo "== engines against onnxruntime (CPU)"
timeout 50 python scripts/gpu_compare.py "$work/bundle-omni" "$work/bundle-audio" || status=1

echo "gpu_check: done in $(( $(date +%s) - started )) s, $([ $status = 0 ] && echo 'everything agreed' || echo 'see the failures above')"
exit $status
