#!/usr/bin/env bash
# Enable, disable and check the venus-edge services.
#   venusctl.sh enable [--board BOARD|none] [--user]  install units + profile, start at boot and now
#   venusctl.sh disable [--user]                  stop and remove from boot (files stay)
#   venusctl.sh status [--user]                   units, profile check, last log lines
#   venusctl.sh profile BOARD [--user]            switch the board profile
# System mode needs root and the layout /opt/venus-edge (stage.sh or setup.sh --prefix).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=detect.sh
. "$HERE/detect.sh"
ROOT="${VENUS_ROOT:-}"   # tests install into a fake root; systemctl is then not called

die() { printf 'venusctl: %s\n' "$1" >&2; exit "${2:-1}"; }

USER_MODE=0 BOARD="" CMD="${1:-}"
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --user) USER_MODE=1; shift ;;
    --board) BOARD="${2:?--board needs a name}"; shift 2 ;;
    -*) die "unknown option '$1'; see the usage at the top of $0." 2 ;;
    *) [ "$CMD" = profile ] && [ -z "$BOARD" ] && { BOARD="$1"; shift; continue; }
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
  if [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ] && [ "$CMD" != status ]; then
    die "system services need root: run with sudo, or use --user on a desktop." 2
  fi
fi

boards() {
  local f out=()
  for f in "$HERE"/profiles/*.env; do f="${f##*/}"; out+=("${f%.env}"); done
  echo "${out[*]}"
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
  status)
    [ -n "$ROOT" ] || "${SYSTEMCTL[@]}" --no-pager status "${UNITS[@]}" || true
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
  *) sed -n '2,7p' "$0" >&2; exit 2 ;;
esac
