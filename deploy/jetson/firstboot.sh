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

# Progress for venusctl.sh status; with --http in the site settings, the same address shows it as a
# page until the assistant (and its own page) starts.
PROGRESS="$PREFIX/firstboot.json"
http="$(sed -n 's/^VENUS_ARGS=.*--http[= ]\([^ "]*\).*/\1/p' "$CONF/venus-edge.env" 2>/dev/null | head -n1)"
if [ -n "$http" ]; then
  python3 "$HERE/progress.py" serve "$PROGRESS" "$http" &
  server=$!
  trap 'kill "$server" 2>/dev/null || true' EXIT
fi
# The llama-cpp-python build lands in a known place, for venusctl.sh export-llama.
export VENUS_EDGE_CACHE="$PREFIX/cache"
# The staged wheels (stage.sh --wheels) make this offline: setup.sh then never asks the network.
# Without them the install needs the network, so only then is it waited for (the unit does not wait).
if ! compgen -G "$PREFIX/wheels/*.whl" >/dev/null && ! compgen -G "$PREFIX/wheels/*.tar.gz" >/dev/null; then
  if command -v nm-online >/dev/null; then
    nm-online -s -q --timeout=120 || echo "venus-firstboot: no network after 120 s; installing anyway." >&2
  elif [ -x /lib/systemd/systemd-networkd-wait-online ]; then
    /lib/systemd/systemd-networkd-wait-online --timeout=120 \
      || echo "venus-firstboot: no network after 120 s; installing anyway." >&2
  fi
fi
"$HERE/setup.sh" --prefix "$PREFIX" --source "$PREFIX/src" --wheels "$PREFIX/wheels" --progress "$PROGRESS"

if [ ! -f "$CONF/profile.env" ]; then
  board="$(venus_board "")"
  [ -n "$board" ] || { echo "venus-firstboot: cannot tell the board; run venusctl.sh profile BOARD." >&2; exit 1; }
  install -d -m 0755 "$CONF"
  install -m 0644 "$HERE/profiles/$board.env" "$CONF/profile.env"
  echo "venus-firstboot: profile $board"
fi

[ -f "$CONF/venus-edge.env" ] || install -D -m 0644 "$HERE/venus-edge.env" "$CONF/venus-edge.env"

if [ -f "$PREFIX/bundle/manifest.json" ]; then
  # Not fatal: a graph without an engine runs in onnxruntime (whose TensorRT provider caches its own).
  "$PREFIX/venv/bin/venus-export" engines "$PREFIX/bundle" \
    || echo "venus-firstboot: not every engine was built (see above); those graphs run in onnxruntime." >&2
fi
