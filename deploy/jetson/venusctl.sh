#!/usr/bin/env bash
# Enable, disable and check the venus-edge services.
#   venusctl.sh enable [--board BOARD|none] [--user]  install units + profile, start at boot and now
#   venusctl.sh disable [--user]                  stop and remove from boot (files stay)
#   venusctl.sh status [--user]                   units, profile check, last log lines
#   venusctl.sh profile BOARD [--user]            switch the board profile
#   venusctl.sh export-llama DIR                  copy the CUDA llama-cpp-python wheel this device built
#                                                 (for wheels.sh --llama: later flashes skip the build)
# System mode needs root and the layout /opt/venus-edge (stage.sh or setup.sh --prefix).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=detect.sh
. "$HERE/detect.sh"
ROOT="${VENUS_ROOT:-}"   # tests install into a fake root; systemctl is then not called

die() { printf 'venusctl: %s\n' "$1" >&2; exit "${2:-1}"; }

USER_MODE=0 BOARD="" OUT="" CMD="${1:-}"
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --user) USER_MODE=1; shift ;;
    --board) BOARD="${2:?--board needs a name}"; shift 2 ;;
    -*) die "unknown option '$1'; see the usage at the top of $0." 2 ;;
    *) [ "$CMD" = profile ] && [ -z "$BOARD" ] && { BOARD="$1"; shift; continue; }
       [ "$CMD" = export-llama ] && [ -z "$OUT" ] && { OUT="$1"; shift; continue; }
       die "unexpected argument '$1'." 2 ;;
  esac
done

if [ "$USER_MODE" -eq 1 ]; then
  CONF="$ROOT$HOME/.config/venus-edge"
  UNIT_DIR="$ROOT$HOME/.config/systemd/user"
  SHARE="$ROOT$HOME/.local/share/venus-edge"
  SYSTEMCTL=(systemctl --user)
  UNITS=(venus-edge.service)
else
  CONF="$ROOT/etc/venus-edge"
  UNIT_DIR="$ROOT/etc/systemd/system"
  SHARE="$ROOT/opt/venus-edge"
  SYSTEMCTL=(systemctl)
  UNITS=(venus-power.service venus-edge.service)
  if [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ] && [ "$CMD" != status ] && [ "$CMD" != export-llama ]; then
    die "system services need root: run with sudo, or use --user on a desktop." 2
  fi
fi

boards() {
  local f out=()
  for f in "$HERE"/profiles/*.env; do f="${f##*/}"; out+=("${f%.env}"); done
  echo "${out[*]}"
}

# The wheel setup.sh built (first boot: under /opt/venus-edge/cache; by hand: the caller's cache).
export_llama() {
  local found=() w f
  [ -n "$OUT" ] || die "export-llama needs a folder to copy the wheel into." 2
  mapfile -t found < <(compgen -G "$SHARE/cache/wheels/llama-cpp-python-*/llama_cpp_python-*.whl";
                       compgen -G "${VENUS_EDGE_CACHE:-$HOME/.cache/venus-edge}/wheels/llama-cpp-python-*/llama_cpp_python-*.whl")
  [ ${#found[@]} -gt 0 ] || die "no llama-cpp-python wheel built on this device (looked in $SHARE/cache and ~/.cache/venus-edge); run setup.sh first."
  w="${found[0]}"
  for f in "${found[@]}"; do [ "$f" -nt "$w" ] && w="$f"; done
  case "${w##*/}" in *_aarch64.whl) ;; *) die "${w##*/} is not an aarch64 wheel; export it from the Jetson that built it." ;; esac
  # a CPU-only build would be staged for every later flash: check that the CUDA backend is inside
  "${PY:-python3}" -c 'import sys, zipfile; sys.exit(not any("ggml-cuda" in n for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$w" \
    || die "${w##*/} has no CUDA backend (libggml-cuda); rebuild it with setup.sh before exporting."
  install -d "$OUT"
  cp "$w" "$OUT/"
  echo "exported $OUT/${w##*/}; on the workstation: deploy/jetson/wheels.sh WHEELS_DIR --llama $OUT/${w##*/}"
}

run_systemctl() { [ -n "$ROOT" ] || "${SYSTEMCTL[@]}" "$@"; }

set_profile() {
  local board="$1" src
  install -d -m 0755 "$CONF"
  [ -f "$CONF/venus-edge.env" ] || install -m 0644 "$HERE/venus-edge.env" "$CONF/venus-edge.env"
  # desktops without a board profile: no memory check, the runtime decides
  if [ "$board" = none ]; then rm -f "$CONF/profile.env"; echo "no board profile"; return 0; fi
  if [ -z "$board" ]; then
    board="$(venus_board "")"
    [ -n "$board" ] || die "cannot tell which Jetson this is; pass --board (one of: $(boards))."
  fi
  src="$HERE/profiles/$board.env"
  [ -f "$src" ] || die "no profile '$board'; choose one of: $(boards)."
  install -m 0644 "$src" "$CONF/profile.env"
  echo "profile $board -> $CONF/profile.env"
}

install_units() {
  install -d -m 0755 "$UNIT_DIR"
  if [ "$USER_MODE" -eq 1 ]; then
    install -m 0644 "$HERE/systemd/venus-edge-user.service" "$UNIT_DIR/venus-edge.service"
    # the user unit runs the copies under ~/.local/share/venus-edge
    install -d -m 0755 "$SHARE/jetson"
    cp -r "$HERE/." "$SHARE/jetson/"
  else
    local u
    for u in venus-edge.service venus-power.service venus-firstboot.service; do
      install -m 0644 "$HERE/systemd/$u" "$UNIT_DIR/$u"
    done
    install -D -m 0644 "$HERE/systemd/venus-edge.sysusers" "$ROOT/usr/lib/sysusers.d/venus-edge.conf"
    [ -n "$ROOT" ] || systemd-sysusers venus-edge.conf
  fi
}

case "$CMD" in
  enable)
    install_units
    set_profile "$BOARD"
    run_systemctl daemon-reload
    run_systemctl enable --now "${UNITS[@]}"
    ;;
  disable)
    run_systemctl disable --now "${UNITS[@]}"
    ;;
  profile)
    [ -n "$BOARD" ] || die "profile needs a BOARD name." 2
    set_profile "$BOARD"
    run_systemctl try-restart venus-edge.service
    ;;
  export-llama) export_llama ;;
  status)
    [ -n "$ROOT" ] || "${SYSTEMCTL[@]}" --no-pager status "${UNITS[@]}" || true
    [ "$USER_MODE" -eq 1 ] || python3 "$HERE/progress.py" show "$SHARE/firstboot.json" || true
    if [ -f "$CONF/profile.env" ]; then
      "$SHARE/venv/bin/python" "$HERE/profiles.py" check "$CONF/profile.env" || true
    else
      echo "no profile installed in $CONF (venusctl.sh enable --board BOARD)."
    fi
    if [ -z "$ROOT" ]; then
      if [ "$USER_MODE" -eq 1 ]; then journalctl --user -u venus-edge -n 20 --no-pager || true
      else journalctl -u venus-edge -u venus-power -u venus-firstboot -n 20 --no-pager || true; fi
    fi
    ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
