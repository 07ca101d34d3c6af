#!/usr/bin/env bash
# First boot (venus-firstboot.service): install from the staged source and wheels, pick the
# board profile if none was staged, build the bundle's TensorRT engines.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=detect.sh
. "$HERE/detect.sh"
PREFIX="${VENUS_PREFIX:-/opt/venus-edge}"
CONF="${VENUS_CONF:-/etc/venus-edge}"

# The service user; systemd-sysusers.service may have skipped it on an image it thinks is current.
if command -v systemd-sysusers >/dev/null; then systemd-sysusers venus-edge.conf; fi

"$HERE/setup.sh" --prefix "$PREFIX" --source "$PREFIX/src" --wheels "$PREFIX/wheels"

if [ ! -f "$CONF/profile.env" ]; then
  board="$(venus_board "")"
  [ -n "$board" ] || { echo "venus-firstboot: cannot tell the board; run venusctl.sh profile BOARD." >&2; exit 1; }
  install -d -m 0755 "$CONF"
  install -m 0644 "$HERE/profiles/$board.env" "$CONF/profile.env"
  echo "venus-firstboot: profile $board"
fi

[ -f "$CONF/venus-edge.env" ] || install -D -m 0644 "$HERE/venus-edge.env" "$CONF/venus-edge.env"

if [ -d "$PREFIX/bundle" ] && find "$PREFIX/bundle" -name '*.onnx' -print -quit | grep -q .; then
  # Not fatal: without engines onnxruntime's TensorRT provider builds and caches its own.
  "$PREFIX/venv/bin/python" "$HERE/engines.py" refresh "$PREFIX/bundle" \
    || echo "venus-firstboot: engine build failed (see above); the runtime falls back to onnxruntime." >&2
fi
