#!/usr/bin/env bash
# Stage venus-edge, its wheels, a bundle and the systemd units into an L4T root filesystem
# (before NVIDIA's flash tools run) or into a tarball for devices already running.
#   stage.sh --rootfs Linux_for_Tegra/rootfs [--bundle DIR] [--wheels DIR] [--board BOARD]
#   stage.sh --tarball venus-edge-stage.tar.gz [--bundle DIR] [--wheels DIR] [--board BOARD]
#   [--force]  stage a bundle that does not fit the board or match its plan (a warning instead of a refusal)
# Without --board the first boot detects the module and picks its profile. With --wheels DIR (wheels.sh)
# the folder must hold every wheel the device needs (pip and llama-cpp-python included; checked here);
# venus-edge goes in as source and is installed from it, offline.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$(cd "$HERE/../.." && pwd)"
ROOTFS="" TARBALL="" BUNDLE="" WHEELS="" BOARD="" FORCE=0
PY="${PYTHON:-python3}"
UNITS=(venus-firstboot.service venus-power.service venus-edge.service)

die() { printf 'stage: %s\n' "$1" >&2; exit "${2:-1}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rootfs) ROOTFS="${2:?--rootfs needs a directory}"; shift 2 ;;
    --tarball) TARBALL="${2:?--tarball needs a file name}"; shift 2 ;;
    --bundle) BUNDLE="${2:?--bundle needs a directory}"; shift 2 ;;
    --wheels) WHEELS="${2:?--wheels needs a directory}"; shift 2 ;;
    --board) BOARD="${2:?--board needs a name}"; shift 2 ;;
    --source) SOURCE="${2:?--source needs a directory}"; shift 2 ;;
    --force) FORCE=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) die "unknown option '$1'; see --help." 2 ;;
  esac
done

[ -n "$ROOTFS" ] || [ -n "$TARBALL" ] || die "give --rootfs DIR (flashing) or --tarball FILE (running devices)." 2
[ -z "$ROOTFS" ] || [ -z "$TARBALL" ] || die "give either --rootfs or --tarball, not both." 2
[ -z "$BUNDLE" ] || [ -d "$BUNDLE" ] || die "bundle $BUNDLE is not a directory; give the folder venus-export build wrote."
[ -z "$WHEELS" ] || [ -d "$WHEELS" ] || die "wheel folder $WHEELS does not exist."
[ -z "$BOARD" ] || [ -f "$HERE/profiles/$BOARD.env" ] \
  || die "no profile '$BOARD'; choose one of: $(cd "$HERE/profiles" && echo ./*.env | sed 's|\./||g; s|\.env||g')."
[ -f "$SOURCE/pyproject.toml" ] || die "$SOURCE is not the venus-edge source tree (no pyproject.toml)."

# The wheel folder: what the offline first boot will find there (it cannot fetch what is missing).
if [ -n "$WHEELS" ]; then
  compgen -G "$WHEELS/pip-*.whl" >/dev/null \
    || die "$WHEELS has no pip wheel, which the offline first boot needs for its venv; collect the wheels with wheels.sh."
  if compgen -G "$WHEELS/llama_cpp_python-*_aarch64.whl" >/dev/null; then
    echo "stage: wheels: llama-cpp-python prebuilt; the first boot installs offline and compiles nothing." >&2
  elif compgen -G "$WHEELS/llama_cpp_python-*.tar.gz" >/dev/null || compgen -G "$WHEELS/llama-cpp-python-*.tar.gz" >/dev/null; then
    echo "stage: wheels: llama-cpp-python as source; the first boot compiles it with CUDA (20-40 minutes). wheels.sh --llama (a wheel from venusctl.sh export-llama) avoids that." >&2
  else
    die "$WHEELS has no llama-cpp-python (neither a linux_aarch64 wheel nor its source); collect the wheels with wheels.sh."
  fi
fi

# The bundle against the board's plan (export/plan.py's numbers): refuse, or with --force warn.
if [ -n "$BUNDLE" ] && [ -n "$BOARD" ]; then
  if ! found="$(PYTHONPATH="$SOURCE" "$PY" "$HERE/bundle_check.py" "$BUNDLE" "$HERE/profiles/$BOARD.env")"; then
    if [ "$FORCE" -eq 1 ]; then
      printf 'stage: warning: bundle %s for %s, staged anyway (--force): %s\n' "$BUNDLE" "$BOARD" "$(echo "$found" | paste -sd' ')" >&2
    else
      die "bundle $BUNDLE does not suit $BOARD: $(echo "$found" | paste -sd' ') Rebuild it with the board's types (venus-export plan --device $BOARD), or add --force."
    fi
  fi
fi

stage_into() {
  local root="$1" opt="$1/opt/venus-edge" u
  install -d -m 0755 "$opt" "$opt/src" "$opt/jetson" "$opt/wheels" "$opt/bundle" \
    "$root/etc/venus-edge" "$root/etc/systemd/system/multi-user.target.wants" "$root/usr/lib/sysusers.d"
  # The source: installed on first boot by setup.sh (no build on the workstation).
  tar -C "$SOURCE" --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' \
    -cf - pyproject.toml README.md LICENSE edge export kernels quant | tar -C "$opt/src" -xf -
  tar -C "$HERE" --exclude=__pycache__ --exclude='*.pyc' -cf - . | tar -C "$opt/jetson" -xf -
  [ -z "$WHEELS" ] || cp -r "$WHEELS/." "$opt/wheels/"
  [ -z "$BUNDLE" ] || cp -r "$BUNDLE/." "$opt/bundle/"
  # Files readable by all, directories searchable, scripts executable; nothing group/world-writable.
  find "$opt" -type d -exec chmod 0755 {} +
  find "$opt" -type f -exec chmod 0644 {} +
  find "$opt/jetson" -maxdepth 1 -type f \( -name '*.sh' -o -name '*.py' \) -exec chmod 0755 {} +

  for u in "${UNITS[@]}"; do
    install -m 0644 "$HERE/systemd/$u" "$root/etc/systemd/system/$u"
    # what `systemctl enable` would do: an absolute link, valid once the rootfs is /
    ln -sfn "/etc/systemd/system/$u" "$root/etc/systemd/system/multi-user.target.wants/$u"
  done
  [ -f "$root/etc/venus-edge/venus-edge.env" ] || install -m 0644 "$HERE/venus-edge.env" "$root/etc/venus-edge/venus-edge.env"
  [ -z "$BOARD" ] || install -m 0644 "$HERE/profiles/$BOARD.env" "$root/etc/venus-edge/profile.env"
  # The service user, created at boot by systemd-sysusers (no chroot into the rootfs needed).
  install -m 0644 "$HERE/systemd/venus-edge.sysusers" "$root/usr/lib/sysusers.d/venus-edge.conf"
  if [ "$(id -u)" -eq 0 ]; then chown -R 0:0 "$opt" "$root/etc/venus-edge"; fi
}

if [ -n "$ROOTFS" ]; then
  if [ ! -f "$ROOTFS/etc/os-release" ] || [ ! -d "$ROOTFS/etc/systemd" ]; then
    die "$ROOTFS does not look like a root filesystem (no etc/os-release or etc/systemd); give Linux_for_Tegra/rootfs."
  fi
  stage_into "$ROOTFS"
  echo "staged into $ROOTFS; flash as usual (e.g. sudo ./flash.sh <board> internal); the first boot installs and starts venus-edge."
else
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  stage_into "$tmp"
  # Only our own paths: no entries for /, /etc or /usr, whose modes must not change on unpacking.
  # The site settings stay as the device has them (first boot installs the default if absent).
  (cd "$tmp" && tar --owner=0 --group=0 --numeric-owner --exclude=etc/venus-edge/venus-edge.env -czf - etc/venus-edge etc/systemd/system/venus-*.service \
    etc/systemd/system/multi-user.target.wants opt/venus-edge usr/lib/sysusers.d/venus-edge.conf) >"$TARBALL"
  echo "wrote $TARBALL; on the device: sudo tar -xzpf $(basename "$TARBALL") -C / && sudo systemd-sysusers" \
    "&& sudo systemctl daemon-reload && sudo systemctl start venus-firstboot.service venus-power.service venus-edge.service"
fi
